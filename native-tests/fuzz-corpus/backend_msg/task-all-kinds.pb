
ž
AsyncProfilerTaskQuery4
SerialNumber$5e0b6c0c-2f4e-4d8e-9b1a-1f6e1a2b3c4d
TaskIdt-2
Duration60‘
ExecArgs„event=cpu,alloc=1m,lock=10us,wall,interval=5ms,jstackdepth=512,chunktime=60,chunksize=10m,threads,include=com.example.*,cstack=dwarf

CreateTime1732694400001