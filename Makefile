# jsampler - low-overhead sampling profiler for the JVM.
# make            build/libjsampler.so and build/jsampler
# make demo       profile the bundled demo app, print the flame graph's path
# make test       every test: native unit tests (+ASan/UBSan), JVM integration, browser
# make clean

JAVA_HOME ?= $(shell dirname $$(dirname $$(readlink -f $$(command -v javac 2>/dev/null || echo /nonexistent/bin/javac))))
CC       ?= gcc
BUILD    := build
CFLAGS_COMMON := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wno-format-truncation -fPIC -g \
                 -fvisibility=hidden -Iinclude -I$(BUILD)/gen \
                 -I$(JAVA_HOME)/include -I$(JAVA_HOME)/include/linux -D_GNU_SOURCE
CFLAGS   ?= -O2
ALL_CFLAGS = $(CFLAGS_COMMON) $(CFLAGS)
LDLIBS   := -lpthread -ldl -lrt

# Modules shared by the agent and the CLI (pure C, no JVM).
COMMON_SRCS := src/profile.c src/collapsed_read.c src/out_collapsed.c src/out_flat.c src/out_tree.c src/out_html.c src/args.c \
               $(wildcard src/jfr_read.c src/out_json.c)
# Agent-only modules.
AGENT_SRCS  := $(filter-out $(COMMON_SRCS),$(wildcard src/*.c))
TOOL_SRCS   := $(wildcard src/tool/*.c)

COMMON_OBJS := $(COMMON_SRCS:src/%.c=$(BUILD)/obj/%.o)
AGENT_OBJS  := $(AGENT_SRCS:src/%.c=$(BUILD)/obj/%.o)
TOOL_OBJS   := $(TOOL_SRCS:src/%.c=$(BUILD)/obj/%.o)
GEN_HDRS    := $(BUILD)/gen/flamegraph_html.h

LIB  := $(BUILD)/libjsampler.so
TOOL := $(BUILD)/jsampler

.PHONY: all deps test demo clean native-test check-asan java-test browser-test bench bench-smoke
all: $(LIB) $(TOOL)

$(BUILD)/obj/%.o: src/%.c $(wildcard include/*.h) $(GEN_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The flame-graph page is kept as a real HTML file and embedded as a C string.
$(BUILD)/gen/flamegraph_html.h: src/flamegraph.html tools/embed.sh
	@mkdir -p $(dir $@)
	sh tools/embed.sh js_flamegraph_html < $< > $@.tmp && mv $@.tmp $@

$(LIB): $(COMMON_OBJS) $(AGENT_OBJS)
	$(CC) -shared -o $@ $^ $(LDLIBS) -Wl,-z,defs -Wl,--version-script=src/exports.map

$(TOOL): $(TOOL_OBJS) $(COMMON_OBJS)
	$(CC) -o $@ $^ $(LDLIBS)

# ---- dependencies: install missing Debian packages without asking ----
DEB_PKGS := libunwind-dev libprotobuf-c-dev protobuf-c-compiler libcurl4-openssl-dev libcmocka-dev \
            pkg-config chromium nodejs npm
deps:
	@sh tools/deps.sh $(DEB_PKGS)

# ---- tests ----
NATIVE_TESTS := $(patsubst native-tests/%.c,%,$(wildcard native-tests/test_*.c))
TEST_LIB_SRCS := $(COMMON_SRCS) src/store.c src/stats.c src/log.c src/walker.c $(wildcard src/jfr_write.c)
native-test: deps
	@$(MAKE) --no-print-directory run-native-tests VARIANT=plain

check-asan: deps
	@$(MAKE) --no-print-directory run-native-tests VARIANT=asan \
	    CFLAGS="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

TDIR = $(BUILD)/tests-$(VARIANT)
run-native-tests: $(NATIVE_TESTS:%=$(BUILD)/tests-$(VARIANT)/%)
	@set -e; pass=0; for t in $^; do echo "== $$t"; ./$$t; pass=$$((pass+1)); done; \
	 echo "native tests ($(VARIANT)): $$pass suites passed"

$(BUILD)/tests-$(VARIANT)/%: native-tests/%.c $(TEST_LIB_SRCS) $(wildcard include/*.h) $(GEN_HDRS) native-tests/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Wno-error=unused-function -o $@ $< $(TEST_LIB_SRCS) $(LDLIBS) -lcmocka

java-test: all
	@sh java-test-harness/run.sh

# Also checks the page the agent wrote in java-test, when that ran first.
browser-test: all
	@html=$(BUILD)/java-test/profile-jdk17.html; [ -f $$html ] || html=$(BUILD)/java-test/profile-jdk25.html; \
	 if [ -f $$html ]; then JSAMPLER_HTML=$$html; export JSAMPLER_HTML; fi; sh java-test-harness/browser/run.sh

test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory native-test
	@$(MAKE) --no-print-directory check-asan
	@$(MAKE) --no-print-directory java-test
	@$(MAKE) --no-print-directory browser-test

demo: deps all
	@sh java-test-harness/demo.sh

clean:
	rm -rf $(BUILD)
