# jsampler - low-overhead sampling profiler for the JVM.
# make            build/libjsampler.so and build/jsampler
# make demo       profile the bundled demo app, print the flame graph's path
# make test       every test: native unit tests (+ASan/UBSan), JVM integration, browser
# make clean

JAVA_HOME ?= $(shell dirname $$(dirname $$(readlink -f $$(command -v javac 2>/dev/null || echo /nonexistent/bin/javac))))
CC       ?= gcc
BUILD    := build
CFLAGS_COMMON := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wno-format-truncation -fPIC -g \
                 -fvisibility=hidden -Iinclude -I$(BUILD)/gen -I$(BUILD)/gen/proto \
                 -I$(JAVA_HOME)/include -I$(JAVA_HOME)/include/linux -D_GNU_SOURCE
CFLAGS   ?= -O2
ALL_CFLAGS = $(CFLAGS_COMMON) $(CFLAGS)
LDLIBS   := -lpthread -ldl -lrt -lm
AGENT_LDLIBS := -lcurl -lprotobuf-c -lz -lunwind-x86_64 -lunwind
TOOL_LDLIBS  := -lprotobuf-c -lz

# Layers, one folder each (docs/ARCHITECTURE.md; `make check-layers` keeps them honest):
#   util < sample < engine < core < agent;  util < output < jfr < core;  util < attach;  util < backend < agent;
#   tool = attach + output + jfr + util. The backend's wire messages and the pprof profile (output/) are generated
#   from proto/ by protoc-c.
# The CLI links the pure-C layers; the agent links everything. New files need no edit here.
COMMON_SRCS := $(wildcard src/util/*.c src/output/*.c src/jfr/*.c) src/core/args.c
PROTOS      := $(wildcard proto/*/*.proto)
PB_SRCS     := $(PROTOS:proto/%.proto=$(BUILD)/gen/proto/%.pb-c.c)
PB_HDRS     := $(PB_SRCS:.c=.h)
AGENT_SRCS  := $(wildcard src/sample/*.c src/engine/*.c src/agent/*.c src/backend/*.c) \
               $(filter-out src/core/args.c,$(wildcard src/core/*.c))
TOOL_SRCS   := $(wildcard src/tool/*.c src/attach/*.c)
JFR_READ_SRCS  := $(wildcard src/jfr/jfr_read*.c src/jfr/jfr_meta_read*.c)
JFR_WRITE_SRCS := $(wildcard src/jfr/jfr_write*.c) src/jfr/jfr_meta.c src/jfr/jfr_pool.c src/util/safefile.c
TREE_SRCS      := src/output/calltree.c src/output/out_tree.c src/output/out_json.c

COMMON_OBJS := $(COMMON_SRCS:src/%.c=$(BUILD)/obj/%.o)
AGENT_OBJS  := $(AGENT_SRCS:src/%.c=$(BUILD)/obj/%.o)
TOOL_OBJS   := $(TOOL_SRCS:src/%.c=$(BUILD)/obj/%.o)
PB_OBJS     := $(PB_SRCS:$(BUILD)/gen/proto/%.c=$(BUILD)/obj/proto/%.o)
PPROF_PB_OBJ := $(BUILD)/obj/proto/pprof/profile.pb-c.o
GEN_HDRS    := $(BUILD)/gen/flamegraph_html.h $(PB_HDRS)

LIB  := $(BUILD)/libjsampler.so
TOOL := $(BUILD)/jsampler
JAR  := $(BUILD)/jsampler.jar
JAVA_SRCS := $(wildcard src/java/jsampler/*.java)

.PHONY: all deps test demo demo-task clean check-layers check-tsan native-test check-asan java-test backend-test jfr-test jfr-tool-test jfr-jdk-test jfr-agent-test \
        pprof-test browser-test bench bench-smoke sample-cost stress stress-smoke
all: $(LIB) $(TOOL) $(JAR)

# Header dependencies are tracked by the compiler (-MMD); the generated page header is an order-only prerequisite.
$(BUILD)/obj/%.o: src/%.c | $(GEN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

-include $(wildcard $(BUILD)/obj/*/*.d)
# An allocation sample walks its own native stack by frame pointers (core/alloc_native_int.h): the callback's files
# keep rbp a frame pointer so the chain reaches the VM's frames.
$(BUILD)/obj/core/vmevents.o $(BUILD)/obj/core/alloc_native.o: ALL_CFLAGS += -fno-omit-frame-pointer
.SECONDARY: $(PB_SRCS) $(PB_HDRS)

# The flame-graph page is kept as a real HTML file and embedded as a C string.
$(BUILD)/gen/flamegraph_html.h: src/output/flamegraph.html tools/embed.sh
	@mkdir -p $(dir $@)
	sh tools/embed.sh js_flamegraph_html < $< > $@.tmp && mv $@.tmp $@

# Wire messages: C from proto/ with protoc-c at build time (one .pb-c.c/.h pair per .proto).
$(BUILD)/gen/proto/%.pb-c.c $(BUILD)/gen/proto/%.pb-c.h: proto/%.proto
	@mkdir -p $(BUILD)/gen/proto
	protoc-c --c_out=$(BUILD)/gen/proto -Iproto $<

$(BUILD)/obj/proto/%.o: $(BUILD)/gen/proto/%.c | $(GEN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(COMMON_OBJS) $(AGENT_OBJS) $(PB_OBJS)
	$(CC) -shared -o $@ $^ $(LDLIBS) $(AGENT_LDLIBS) -Wl,-z,defs -Wl,--version-script=src/agent/exports.map

# The in-process Java API (jsampler.JSampler), for Java 8 and later; no build tool but the JDK's.
$(JAR): $(JAVA_SRCS)
	@rm -rf $(BUILD)/java-api && mkdir -p $(BUILD)/java-api
	$(JAVA_HOME)/bin/javac --release 8 -Xlint:-options -d $(BUILD)/java-api $(JAVA_SRCS)
	$(JAVA_HOME)/bin/jar --create --file $@ -C $(BUILD)/java-api .

$(TOOL): $(TOOL_OBJS) $(COMMON_OBJS) $(PPROF_PB_OBJ)
	$(CC) -o $@ $^ $(LDLIBS) $(TOOL_LDLIBS)

# ---- dependencies: install missing Debian packages without asking ----
DEB_PKGS := libunwind-dev libprotobuf-c-dev protobuf-c-compiler libcurl4-openssl-dev libcmocka-dev zlib1g-dev \
            pkg-config chromium nodejs npm jattach python3-grpcio python3-grpc-tools python3-protobuf openssl golang-go
deps:
	@sh tools/deps.sh $(DEB_PKGS)

# ---- tests ----
NATIVE_TESTS := $(patsubst native-tests/%.c,%,$(wildcard native-tests/test_*.c native-tests/fuzz_*.c))
# Native tests link every layer below the agent's JVMTI entry points (no JVM needed).
TEST_LIB_SRCS := $(COMMON_SRCS) $(filter-out src/agent/%,$(AGENT_SRCS)) $(wildcard src/attach/*.c) src/tool/cli_reply.c
TEST_PB_OBJS   = $(PB_SRCS:$(BUILD)/gen/proto/%.c=$(TDIR)/obj/proto/%.o)
# Each builds the agent first with the plain flags: the sub-make's CFLAGS would otherwise rebuild an out-of-date
# library with the sanitizers' (test_capi loads it), which then fails to link.
native-test: deps $(LIB)
	@$(MAKE) --no-print-directory run-native-tests VARIANT=plain

check-asan: deps $(LIB)
	@$(MAKE) --no-print-directory run-native-tests VARIANT=asan \
	    CFLAGS="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

# Each variant (plain, asan) compiles the library sources once into build/tests-VARIANT/libjstest.a.
TDIR = $(BUILD)/tests-$(VARIANT)
TEST_OBJS = $(TEST_LIB_SRCS:src/%.c=$(TDIR)/obj/%.o)
# Suites that time what they check (timer periods, bounded waits, deadlines) take a lock, so that the variants, which
# make test runs side by side, never run two of them at once. test_capi loads $(LIB).
TIMED_TESTS := test_engines test_sampler test_session test_backend_live
run-native-tests: $(NATIVE_TESTS:%=$(BUILD)/tests-$(VARIANT)/%) $(LIB)
	@set -e; pass=0; for t in $(filter-out $(LIB),$^); do echo "== $$t"; s=$$(date +%s); \
	   case " $(TIMED_TESTS) " in *" $$(basename $$t) "*) flock $(BUILD)/.timed-tests.lock ./$$t ;; *) ./$$t ;; esac; \
	   echo "== $$t: $$(($$(date +%s) - s)) s"; pass=$$((pass+1)); done; echo "native tests ($(VARIANT)): $$pass suites passed"

$(TDIR)/obj/%.o: src/%.c | $(GEN_HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC ($(VARIANT)) $<"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(TDIR)/obj/proto/%.o: $(BUILD)/gen/proto/%.c | $(GEN_HDRS)
	@mkdir -p $(dir $@)
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

$(TDIR)/libjstest.a: $(TEST_OBJS) $(TEST_PB_OBJS)
	@rm -f $@ && ar rcs $@ $^

-include $(wildcard $(BUILD)/tests-*/obj/*/*.d)

$(BUILD)/tests-$(VARIANT)/%: native-tests/%.c $(TDIR)/libjstest.a $(wildcard native-tests/*.h)
	@mkdir -p $(dir $@)
	@echo "  CCLD ($(VARIANT)) $@"
	@$(CC) $(ALL_CFLAGS) -Wno-error=unused-function -o $@ $< $(TDIR)/libjstest.a $(LDLIBS) $(AGENT_LDLIBS) -lcmocka

# ThreadSanitizer on the lock-free parts: the store, the thread table, the event ring, the session (whose real
# engines drive the sampler's handshakes). test_sampler is left out: TSan defers signal handlers to its own safe
# points, and that test relies on a signal sent to oneself being handled before the sending call returns.
TSAN_TESTS := test_store test_threads test_session test_evring
check-tsan: deps $(LIB)
	@$(MAKE) --no-print-directory run-native-tests VARIANT=tsan NATIVE_TESTS="$(TSAN_TESTS)" \
	    CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer"

# The layers: no include points up a layer, and no object of the signal-safe zone (src/sample/) references
# malloc, free, stdio, pthread mutexes or JVMTI/JNI (its undefined symbols are read with nm).
check-layers: all
	@sh tools/check_layers.sh $(BUILD)/obj

java-test: all
	@sh java-test-harness/run.sh

# Also checks the page the agent wrote in java-test, when that ran first.
# JFR: our writer read by the JDK's jfr tool, the JDK's recordings read by our reader, the agent's round trip.
# Three independent scripts, so that make -j runs them side by side (make test's readers phase does).
jfr-test: jfr-tool-test jfr-jdk-test jfr-agent-test

jfr-tool-test: all
	@sh native-tests/jfr_tool_check.sh

jfr-jdk-test: all
	@sh native-tests/jfr_jdk_check.sh

jfr-agent-test: all
	@sh java-test-harness/jfr_check.sh

# pprof: the agent's and the converter's files read by `go tool pprof` and by protobuf as SkyWalking's OAP reads them,
# with the collapsed output's shares; our reader on what go tool pprof and a Go program's runtime/pprof write.
pprof-test: all
	@sh java-test-harness/pprof_check.sh

# The SkyWalking task client end to end: JVMs with the agent against a grpcio test backend (java-test-harness/backend).
backend-test: all
	@/usr/bin/python3 java-test-harness/backend/run.py

browser-test: all
	@html=$(BUILD)/java-test/profile-jdk17.html; [ -f $$html ] || html=$(BUILD)/java-test/profile-jdk25.html; \
	 if [ -f $$html ]; then JSAMPLER_HTML=$$html; export JSAMPLER_HTML; fi; sh java-test-harness/browser/run.sh

# Every test, in timed phases (tools/test_all.sh; the seconds per phase in build/test-times.txt).
test: deps
	@MAKE="$(MAKE)" sh tools/test_all.sh

demo: deps all
	@sh java-test-harness/demo.sh

# The SkyWalking loop on the demo: test backend, tasks created (async-profiler, pprof), profiled, uploaded, analysis
# printed (about a minute and a half).
demo-task: deps all
	@/usr/bin/python3 java-test-harness/backend/demo_task.py

clean:
	rm -rf $(BUILD)

# ---- benchmarks (not part of make test; see docs/BENCHMARKS.md) ----
# make bench: every figure, about 25 minutes; make bench-smoke: the same harness with short runs, about 2 minutes.
# Results: build/bench/results.json, table.txt, throughput.svg (bench-smoke: results-smoke.json, ...).
bench: all
	BENCH_MAKE_TARGET=$@ /usr/bin/python3 bench/bench.py

bench-smoke: all
	BENCH_MAKE_TARGET=$@ /usr/bin/python3 bench/bench.py --smoke

# make sample-cost: cost per sample at 10/50/200/2000 frames, random-period options and aliasing, JFR bytes per
# sample, beside the JDK's JFR and (ASPROF_LIB=path of libasyncProfiler.so) async-profiler; about 45 minutes.
sample-cost: all
	/usr/bin/python3 bench/sample_cost.py


# ---- fuzzing: a libFuzzer target per parser of input jsampler does not control (docs/FUZZING.md) ----
# native-tests/fuzz_NAME.c, built with clang's libFuzzer and ASan/UBSan over the library's sources (compiled once
# into build/tests-fuzz/libjstest.a); clang and libclang-rt-14-dev are installed when missing.
#   make fuzz [FUZZ_TIME=seconds per target, default 300] [FUZZ_TARGETS="jfr_read args"]: campaigns, one target
#       after another; seeds from native-tests/fuzz-corpus/NAME (read only), what they find kept in
#       build/fuzz/corpus-NAME, a summary (executions, time, findings) in build/fuzz/summary.txt
#   make fuzz-smoke: every target FUZZ_SMOKE_TIME seconds (default 3) on its committed corpus (part of make test)
#   make fuzz-jfr: the JFR reader's two targets
# A crash, leak, timeout or broken invariant leaves its input as build/fuzz/NAME-crash-* (-leak-, -timeout-, ...):
# after the fix, copy it into native-tests/fuzz-corpus/NAME-crashes/. The native tests (native-test, check-asan)
# build every target without libFuzzer (native-tests/replay_main.c) and replay its corpus and crash reproducers.
FUZZ_CC   ?= clang
FUZZ_TIME ?= 300
FUZZ_SMOKE_TIME ?= 3
FUZZ_DIR  := $(BUILD)/fuzz
FUZZ_ALL  := $(patsubst native-tests/fuzz_%.c,%,$(wildcard native-tests/fuzz_*.c))
FUZZ_TARGETS ?= $(FUZZ_ALL)
# The thread name table's bound is lowered to 1024 names in this build only: fuzz_proc fills it past the bound in
# one input (65536 names a time would run it at 200 executions/s).
FUZZ_CFLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
               -Wno-unknown-warning-option -DJS_THREAD_NAMES_MAX=1024
.PHONY: fuzz fuzz-smoke fuzz-build fuzz-jfr

# The replay test of a target (a native test: make native-test, check-asan).
$(BUILD)/tests-$(VARIANT)/fuzz_%: native-tests/fuzz_%.c native-tests/replay_main.c native-tests/fuzz_util.h \
                                  $(TDIR)/libjstest.a
	@mkdir -p $(dir $@)
	@echo "  CCLD ($(VARIANT)) $@"
	@$(CC) $(ALL_CFLAGS) -DFUZZ_NAME='"$*"' -o $@ $< native-tests/replay_main.c $(TDIR)/libjstest.a $(LDLIBS) \
	    $(AGENT_LDLIBS)

# The libFuzzer binary of a target.
$(FUZZ_DIR)/fuzz_%: native-tests/fuzz_%.c native-tests/fuzz_util.h $(BUILD)/tests-fuzz/libjstest.a
	@mkdir -p $(dir $@)
	@echo "  CCLD (libFuzzer) $@"
	@$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -DJS_FUZZ_LIBFUZZER -o $@ $< $(BUILD)/tests-fuzz/libjstest.a $(LDLIBS) \
	    $(AGENT_LDLIBS)

fuzz-build: deps
	@sh tools/deps.sh clang libclang-rt-14-dev
	@$(MAKE) --no-print-directory $(FUZZ_ALL:%=$(FUZZ_DIR)/fuzz_%) VARIANT=fuzz CC=$(FUZZ_CC) CFLAGS="$(FUZZ_CFLAGS)"

fuzz: fuzz-build
	@sh tools/fuzz.sh campaign $(FUZZ_TIME) $(FUZZ_TARGETS)

fuzz-smoke: fuzz-build
	@sh tools/fuzz.sh smoke $(FUZZ_SMOKE_TIME) $(FUZZ_ALL)

fuzz-jfr: fuzz-build
	@sh tools/fuzz.sh campaign $(FUZZ_TIME) jfr_read jfr_gen

# The pprof reader's target alone: make fuzz-pprof [FUZZ_TIME=seconds] (seeds: Go's runtime/pprof, go tool pprof -proto).
.PHONY: fuzz-pprof
fuzz-pprof: fuzz-build
	@sh tools/fuzz.sh campaign $(FUZZ_TIME) pprof_read

# ---- stress: every hard case of a JVM at once, sessions started, dumped and stopped from the Java API, attach and
# backend tasks at once, watchdogs, RSS/fds/threads at quiet points, every output checked (bench/stress.py).
# make stress [STRESS_MINUTES=60] [STRESS_CPU_HOURS=H: until the JVM used H CPU-hours, STRESS_MINUTES the cap]
# [STRESS_JDKS="17 25"] runs for hours; make stress-smoke, about 90 s per JDK, is make test's last phase. ----
STRESS_MINUTES ?= 60
STRESS_CPU_HOURS ?= 0
STRESS_JDKS ?= 17 25
stress: all
	@/usr/bin/python3 bench/stress.py --minutes $(STRESS_MINUTES) --cpu-hours $(STRESS_CPU_HOURS) --jdks "$(STRESS_JDKS)"

stress-smoke: all
	@/usr/bin/python3 bench/stress.py --smoke --side-by-side --jdks "$(STRESS_JDKS)"

# ---- memory soak (not part of make test): 10 minutes at 1 kHz on 8 threads with JFR streaming; see bench/soak.sh ----
# ---- the agent's own cost on deep stacks with thread churn: see bench/agent_cost.sh ----
# ---- the stack walker: 10 minutes of WalkStress at 1 kHz (soak-walker); handler cost per walker (walker-cost) ----
.PHONY: soak agent-cost soak-walker walker-cost attach-cost
soak: all
	@sh bench/soak.sh

soak-walker: all
	@sh bench/soak_walker.sh

# ---- the malloc heap over 300 API sessions with and without class and thread churn (about 4 minutes) ----
.PHONY: heap-cycles
heap-cycles: all
	@sh bench/heap_cycles.sh

walker-cost: all
	@sh bench/walker_cost.sh

# ---- the task client idle-polling for an hour: its thread's CPU and the JVM's RSS beside a bare JVM ----
# ---- a 10-minute task at 1 ms on 16 busy threads with the default uploadmax, against a full-rate recording ----
.PHONY: backend-idle task-size
backend-idle: all
	@sh bench/backend_idle.sh

task-size: all
	@/usr/bin/python3 bench/task_size.py

# ---- attach: latency to the first sample (jsampler, jcmd, jattach) and the pause with 20k classes loaded ----
attach-cost: all
	@sh bench/attach_cost.sh

agent-cost: all
	@sh bench/agent_cost.sh

# ---- pprof: one Sample per sample against the aggregated form, sizes and convert times (docs/BENCHMARKS.md) ----
.PHONY: pprof-size
pprof-size: all
	@sh bench/pprof_size.sh

event-cost: all
	@/usr/bin/python3 bench/event_cost.py

wall-idle: all
	@sh bench/wall_idle.sh

# ---- what tracing thread starts (pprof THREADCREATE tasks) costs a Thread.start, JDK 17 and 25 ----
.PHONY: thread-starts
thread-starts: all
	@sh bench/thread_starts.sh
