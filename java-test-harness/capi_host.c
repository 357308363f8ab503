/* capi_host.c - a native program that drives libjsampler.so through async-profiler's C API and creates a JVM in
 * the middle, as a native host embedding Java does (the capi-jvm-later check).
 *
 * Usage: capi_host LIB JAVA_HOME CLASSPATH OUT1 OUT2
 * Session 1 starts before the JVM exists (cstack=vmx, as async-profiler's own native-host test asks), burns CPU in
 * host_burn, creates the JVM, runs CpuSplit.main 1 s, stops into OUT1; session 2 starts with the JVM there, burns
 * and runs CpuSplit again, stops into OUT2. Exit 0, or 1 with one line on stderr.
 */
#include <dlfcn.h>
#include <jni.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef const char *(*execute_fn)(const char *, void (*)(const char *, size_t));

static execute_fn execute;

/* Run one command; exit 1 naming it if it fails. */
static void must(const char *cmd)
{
    const char *err = execute(cmd, NULL);
    if (err) {
        fprintf(stderr, "capi_host: '%s': %s\n", cmd, err);
        exit(1);
    }
}

/* Native CPU work for about ms milliseconds. */
__attribute__((noinline)) double host_burn(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile double x = 0;
    do {
        for (int i = 0; i < 100000; i++) x += sqrt((double)i);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
    return x;
}

/* CpuSplit.main({"1", "1"}): one worker, one second. */
static void run_java(JNIEnv *env)
{
    jclass c = (*env)->FindClass(env, "CpuSplit"), s = (*env)->FindClass(env, "java/lang/String");
    jmethodID m = c ? (*env)->GetStaticMethodID(env, c, "main", "([Ljava/lang/String;)V") : NULL;
    jobjectArray a = m && s ? (*env)->NewObjectArray(env, 2, s, (*env)->NewStringUTF(env, "1")) : NULL;
    if (!a) {
        fprintf(stderr, "capi_host: CpuSplit.main not found\n");
        exit(1);
    }
    (*env)->CallStaticVoidMethod(env, c, m, a);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionDescribe(env);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: capi_host LIB JAVA_HOME CLASSPATH OUT1 OUT2\n");
        return 1;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    void (*init)(void) = lib ? (void (*)(void))dlsym(lib, "asprof_init") : NULL;
    execute = lib ? (execute_fn)dlsym(lib, "asprof_execute") : NULL;
    if (!init || !execute) {
        fprintf(stderr, "capi_host: %s\n", dlerror());
        return 1;
    }
    init();
    must("start,event=cpu,interval=1ms,cstack=vmx");
    host_burn(300);
    char path[4096], cp[4200];
    snprintf(path, sizeof path, "%s/lib/server/libjvm.so", argv[2]);
    void *jvm = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    jint (*create)(JavaVM **, void **, void *) = jvm ? (jint(*)(JavaVM **, void **, void *))dlsym(jvm, "JNI_CreateJavaVM") : NULL;
    if (!create) {
        fprintf(stderr, "capi_host: no JNI_CreateJavaVM in %s\n", path);
        return 1;
    }
    snprintf(cp, sizeof cp, "-Djava.class.path=%s", argv[3]);
    JavaVMOption opt = {cp, NULL};
    JavaVMInitArgs args = {JNI_VERSION_1_6, 1, &opt, JNI_TRUE};
    JavaVM *vm;
    JNIEnv *env;
    if (create(&vm, (void **)&env, &args) != JNI_OK) {
        fprintf(stderr, "capi_host: cannot create the JVM\n");
        return 1;
    }
    run_java(env);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "stop,file=%s", argv[4]);
    must(cmd);
    must("start,event=cpu,interval=1ms");
    host_burn(300);
    run_java(env);
    snprintf(cmd, sizeof cmd, "stop,file=%s", argv[5]);
    must(cmd);
    (*vm)->DestroyJavaVM(vm);
    return 0;
}
