
Ð
AsyncProfilerTaskQuery4
SerialNumber$5e0b6c0c-2f4e-4d8e-9b1a-1f6e1a2b3c4d.
TaskId$d0c3a5b2-8f6e-4a1b-9c2d-3e4f5a6b7c8d
Duration30#
ExecArgsevent=cpu,interval=10ms

CreateTime1732694400000