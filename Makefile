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

.PHONY: all deps test demo demo-task clean check-layers check-tsan native-test check-asan java-test backend-test jfr-test \
        pprof-test browser-test bench bench-smoke
all: $(LIB) $(TOOL) $(JAR)

# Header dependencies are tracked by the compiler (-MMD); the generated page header is an order-only prerequisite.
$(BUILD)/obj/%.o: src/%.c | $(GEN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

-include $(wildcard $(BUILD)/obj/*/*.d)
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
NATIVE_TESTS := $(patsubst native-tests/%.c,%,$(wildcard native-tests/test_*.c))
# Native tests link every layer below the agent's JVMTI entry points (no JVM needed).
TEST_LIB_SRCS := $(COMMON_SRCS) $(filter-out src/agent/%,$(AGENT_SRCS)) $(wildcard src/attach/*.c)
TEST_PB_OBJS   = $(PB_SRCS:$(BUILD)/gen/proto/%.c=$(TDIR)/obj/proto/%.o)
native-test: deps
	@$(MAKE) --no-print-directory run-native-tests VARIANT=plain

check-asan: deps
	@$(MAKE) --no-print-directory run-native-tests VARIANT=asan \
	    CFLAGS="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

# Each variant (plain, asan) compiles the library sources once into build/tests-VARIANT/libjstest.a.
TDIR = $(BUILD)/tests-$(VARIANT)
TEST_OBJS = $(TEST_LIB_SRCS:src/%.c=$(TDIR)/obj/%.o)
# Suites that time what they check (timer periods, bounded waits, deadlines) take a lock, so that the variants, which
# make test runs side by side, never run two of them at once.
TIMED_TESTS := test_engines test_sampler test_session test_backend_live
run-native-tests: $(NATIVE_TESTS:%=$(BUILD)/tests-$(VARIANT)/%)
	@set -e; pass=0; for t in $^; do echo "== $$t"; \
	   case " $(TIMED_TESTS) " in *" $$(basename $$t) "*) flock $(BUILD)/.timed-tests.lock ./$$t ;; *) ./$$t ;; esac; \
	   pass=$$((pass+1)); done; echo "native tests ($(VARIANT)): $$pass suites passed"

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

$(BUILD)/tests-$(VARIANT)/%: native-tests/%.c $(TDIR)/libjstest.a native-tests/testutil.h
	@mkdir -p $(dir $@)
	@echo "  CCLD ($(VARIANT)) $@"
	@$(CC) $(ALL_CFLAGS) -Wno-error=unused-function -o $@ $< $(TDIR)/libjstest.a $(LDLIBS) $(AGENT_LDLIBS) -lcmocka

# ThreadSanitizer on the lock-free parts: the store, the thread table, the event ring, the session (whose real
# engines drive the sampler's handshakes). test_sampler is left out: TSan defers signal handlers to its own safe
# points, and that test relies on a signal sent to oneself being handled before the sending call returns.
TSAN_TESTS := test_store test_threads test_session test_evring
check-tsan: deps
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
jfr-test: all
	@sh native-tests/jfr_tool_check.sh
	@sh native-tests/jfr_jdk_check.sh
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

# The SkyWalking loop on the demo: test backend, task created, profiled, uploaded, analysis printed (about 30 s).
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

# ---- fuzzing the JFR reader (not part of make test) ----
# make fuzz-jfr [FUZZ_TIME=seconds, default 300]: installs clang and libclang-rt-14-dev if missing, builds
# native-tests/fuzz_jfr_read.c with libFuzzer and ASan/UBSan, seeds it with native-tests/fuzz-corpus/jfr (read
# only) and keeps what it finds in build/fuzz/corpus.
# A crash, leak or timeout leaves its input in build/fuzz/ (crash-*, leak-*, timeout-*): after fixing it, copy the
# file into native-tests/fuzz-corpus/jfr-crashes/, which test_jfr_read replays in every native test run.
FUZZ_CC   ?= clang
FUZZ_TIME ?= 300
FUZZ_DIR  := $(BUILD)/fuzz
.PHONY: fuzz-jfr
fuzz-jfr:
	@sh tools/deps.sh clang libclang-rt-14-dev
	@mkdir -p $(FUZZ_DIR)/corpus
	$(FUZZ_CC) -std=gnu11 -g -O1 -D_GNU_SOURCE -Iinclude -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    -o $(FUZZ_DIR)/fuzz_jfr_read native-tests/fuzz_jfr_read.c $(JFR_READ_SRCS) src/output/profile.c \
	    src/output/format.c $(TREE_SRCS) src/output/out_collapsed.c
	cd $(FUZZ_DIR) && ./fuzz_jfr_read -max_total_time=$(FUZZ_TIME) -max_len=131072 -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 corpus $(CURDIR)/native-tests/fuzz-corpus/jfr

# ---- fuzzing the pprof reader (not part of make test): make fuzz-pprof [FUZZ_TIME=seconds], seeds in
# native-tests/fuzz-corpus/pprof, what it finds in build/fuzz/corpus-pprof; fixed crashes go to fuzz-corpus/pprof-crashes
# (test_pprof replays both). ----
PPROF_FUZZ_SRCS := $(wildcard src/output/pprof_*.c) src/output/profile.c src/output/collapsed_read.c src/output/out_util.c
.PHONY: fuzz-pprof
fuzz-pprof: $(BUILD)/gen/proto/pprof/profile.pb-c.c
	@sh tools/deps.sh clang libclang-rt-14-dev
	@mkdir -p $(FUZZ_DIR)/corpus-pprof
	$(FUZZ_CC) -std=gnu11 -g -O1 -D_GNU_SOURCE -Iinclude -I$(BUILD)/gen -I$(BUILD)/gen/proto -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -o $(FUZZ_DIR)/fuzz_pprof_read native-tests/fuzz_pprof_read.c $(PPROF_FUZZ_SRCS) $< \
	    -lprotobuf-c -lz
	cd $(FUZZ_DIR) && ./fuzz_pprof_read -max_total_time=$(FUZZ_TIME) -max_len=131072 -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 corpus-pprof $(CURDIR)/native-tests/fuzz-corpus/pprof

# ---- memory soak (not part of make test): 10 minutes at 1 kHz on 8 threads with JFR streaming; see bench/soak.sh ----
# ---- the agent's own cost on deep stacks with thread churn: see bench/agent_cost.sh ----
# ---- the stack walker: 10 minutes of WalkStress at 1 kHz (soak-walker); handler cost per walker (walker-cost) ----
.PHONY: soak agent-cost soak-walker walker-cost attach-cost
soak: all
	@sh bench/soak.sh

soak-walker: all
	@sh bench/soak_walker.sh

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
