
£
AsyncProfilerTaskQuery4
SerialNumber$5e0b6c0c-2f4e-4d8e-9b1a-1f6e1a2b3c4d
TaskId
Duration-5'
ExecArgsevent=ttsp,file=/etc/passwd

CreateTime-1