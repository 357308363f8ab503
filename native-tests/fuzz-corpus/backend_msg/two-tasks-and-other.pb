

ProfileTaskQuery
TaskIdx
”
AsyncProfilerTaskQuery4
SerialNumber$5e0b6c0c-2f4e-4d8e-9b1a-1f6e1a2b3c4d
TaskIda
Duration10
ExecArgs
event=wall

CreateTime1
ž
AsyncProfilerTaskQuery4
SerialNumber$5e0b6c0c-2f4e-4d8e-9b1a-1f6e1a2b3c4d
TaskIdb
Duration86400
ExecArgsalloc

CreateTime2

Extra1