# drun-policy — build, test, demo, golden, bench, fuzz, install.
#
# Sources are found by folder (grammar/ -> compiler/ -> runtime/), so adding a
# file needs no edit here. Generated scanner and parser land in $(B)/gen and
# are never committed. `make SAN=1 ...` builds everything with ASan + UBSan in
# build/san and runs the same suites against it.

CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
SAN      ?= 0
FUZZ_SECONDS ?= 60

SAN_CC   ?= clang
ifeq ($(SAN),1)
B        := build/san
# Built with clang (tests/lib/tap.sh builds the suites' helpers with the same
# SAN_CC): one sanitizer runtime linked in, where gcc loads libasan and
# libubsan, two copies of sanitizer_common whose 11 MB of never-touched bss
# LeakSanitizer scans at every exit (tests/lib/lsan_roots.c spares
# drun-policy the one copy left). `drun-policy --version` costs 60 ms of
# CPU instead of 91 here, and the SAN run spawns thousands of processes. It
# is also a second compiler's -Werror over the code.
CC       := $(SAN_CC)
# fuzzer-no-link: the objects carry libFuzzer's coverage instrumentation, so
# that the fuzz harnesses link these very objects (one instrumented build for
# the SAN suites and every harness, not a second one). Without libFuzzer
# linked, its hooks are the sanitizer runtime's empty defaults: a SAN run of
# the suites costs the same within noise.
SANFLAGS := -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer
# DRUN_SAN: what the code asks (gcc says __SANITIZE_ADDRESS__, clang
# __has_feature(address_sanitizer); this says it for either)
SANDEF   := -DDRUN_SAN=1
OPT      := -O1 -g
# LeakSanitizer's exit-time check without its 10 MB scan of never-touched
# .bss (tests/lib/lsan_roots.c): linked into drun-policy, the program the
# SAN suites start most, and which loads few libraries (the roots cost a
# read of /proc/self/maps per library: more than they save in drun-mcp)
SAN_OBJ  := $(B)/obj/tests/lib/lsan_roots.o
else
B        := build
SANFLAGS :=
SANDEF   :=
OPT      := -O2 -g
SAN_OBJ  :=
endif

PKGS     := jansson libcurl libmicrohttpd libseccomp libidn2 nettle fuse3
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wno-format-nonliteral -Wvla
# compiler/ keeps its layers in subfolders (SPEC §1); each is on the include
# path, so a header is named by its file name alone.
COMPILER_DIRS := compiler $(sort $(dir $(wildcard compiler/*/*.c compiler/*/*.h)))
COMPILER_INC  := $(patsubst %,-I%,$(patsubst %/,%,$(COMPILER_DIRS)))
CPPFLAGS += -D_GNU_SOURCE -DDRUN_VERSION='"$(VERSION)"' $(SANDEF) -Igrammar $(COMPILER_INC) -Iruntime -I$(B)/gen
CFLAGS   += -std=c11 $(OPT) $(WARN) $(SANFLAGS) $(PKG_CFLAGS) -MMD -MP
# Generated code keeps -Werror off and the warnings its generators trip.
GENFLAGS := -std=c11 $(OPT) -w $(SANFLAGS) $(PKG_CFLAGS) -MMD -MP
LDFLAGS  += $(SANFLAGS)
LDLIBS   += $(PKG_LIBS) -lm

# One line per build step ("  CC      compiler/cli/cli.c"); `make V=1` prints the
# full commands instead. $(Q) silences a command, $(E) announces its step.
V ?= 0
ifeq ($(V),1)
Q :=
E := @:
else
Q := @
E := @printf '  %-7s %s\n'
endif

# ---- sources ------------------------------------------------------------------

GRAMMAR_RE := $(wildcard grammar/*.re)
GRAMMAR_Y  := $(wildcard grammar/*.y)
GEN_C      := $(patsubst grammar/%.re,$(B)/gen/%.c,$(GRAMMAR_RE)) \
              $(patsubst grammar/%.y,$(B)/gen/%.c,$(GRAMMAR_Y)) $(B)/gen/default_policy.c \
              $(B)/gen/seccomp_tables.c
GEN_H      := $(patsubst grammar/%.y,$(B)/gen/%.h,$(GRAMMAR_Y))
LIB_SRC    := $(wildcard grammar/*.c) $(filter-out compiler/cli/main.c compiler/policy/idn_static.c,$(wildcard compiler/*.c compiler/*/*.c))
LIB_OBJ    := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRC)) $(patsubst $(B)/gen/%.c,$(B)/obj/gen/%.o,$(GEN_C))
RT_SRC     := $(wildcard runtime/*.c)
RT_OBJ     := $(patsubst %.c,$(B)/obj/%.o,$(RT_SRC))
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN   := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))
MAN_PAGES  := $(patsubst docs/man/%.scd,$(B)/man/%,$(wildcard docs/man/*.scd))

LIB        := $(B)/libdrunpolicy.a
BINS       := $(B)/drun-policy $(if $(RT_SRC),$(B)/drun-mcp)

.PHONY: all deps test demo golden bench fuzz install uninstall clean unit man format format-files FORCE fuzz-build
.DELETE_ON_ERROR:
# Generated sources are only named by pattern rules: keep make from deleting
# them as intermediates (which would regenerate and rebuild on every run).
.SECONDARY: $(GEN_C) $(GEN_H)

all: $(BINS) $(UNIT_BIN) $(MAN_PAGES)

# ---- generated front end ------------------------------------------------------

$(B)/gen/%.c: grammar/%.re $(GEN_H)
	@mkdir -p $(@D)
	$(E) RE2C $@
	$(Q)re2c -W -Werror --utf8 -i --no-generation-date -o $@ $<

# lemon writes NAME.c, NAME.h and NAME.out; any conflict fails the build.
$(B)/gen/%.c $(B)/gen/%.h: grammar/%.y
	@mkdir -p $(@D)
	$(E) LEMON $@
	$(Q)lemon -q -l -T/usr/share/lemon/lempar.c -d$(B)/gen $< > $(B)/gen/$*.lemon.log 2>&1 || \
	  { cat $(B)/gen/$*.lemon.log; rm -f $(B)/gen/$*.c $(B)/gen/$*.h; exit 1; }
	@if grep -q 'conflict' $(B)/gen/$*.lemon.log; then cat $(B)/gen/$*.lemon.log; \
	  rm -f $(B)/gen/$*.c $(B)/gen/$*.h; exit 1; fi
	@touch $(B)/gen/$*.h # lemon keeps an unchanged header's old mtime: without this, every make rebuilds

# The built-in default policy is profiles/default.toml, embedded as bytes.
$(B)/gen/default_policy.c: profiles/default.toml scripts/embed
	@mkdir -p $(@D)
	$(E) EMBED $@
	$(Q)scripts/embed default_policy_toml $< > $@

# The seccomp programs and syscall names, built with libseccomp and checked
# at build time by scripts/seccomp_gen.c (with seccomp_libseccomp.c),
# embedded as data: the binaries neither build the same filter on every
# start nor load libseccomp.
$(B)/gen/seccomp_gen: scripts/seccomp_gen.c compiler/backends/seccomp_filter.c compiler/backends/seccomp_libseccomp.c \
                      compiler/backends/bpf.c grammar/buf.c compiler/backends/seccomp_filter.h compiler/backends/bpf.h grammar/buf.h
	@mkdir -p $(@D)
	$(E) CCLD $@
	$(Q)$(CC) $(CPPFLAGS) -DDRUN_SECCOMP_GENERATOR $(filter-out -MMD -MP,$(CFLAGS)) -o $@ $(filter %.c,$^) $(LDFLAGS) $(LDLIBS)

$(B)/gen/seccomp_tables.c: $(B)/gen/seccomp_gen
	$(E) GEN $@
	$(Q)$< > $@

# ---- objects and binaries -------------------------------------------------------

$(B)/obj/gen/%.o: $(B)/gen/%.c $(GEN_H)
	@mkdir -p $(@D)
	$(E) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(GENFLAGS) -c -o $@ $<

$(B)/obj/%.o: %.c | $(GEN_H)
	@mkdir -p $(@D)
	$(E) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(E) AR $@
	$(Q)ar rcs $@ $^

# drun-policy is linked static (static-pie: ASLR kept) when every archive it
# needs is installed, and the build is not a sanitizer build (ASan cannot be
# static). Without the dynamic loader, `drun-policy run` reaches main about
# 1 ms sooner on the benchmark VM, where a page fault costs 14 us: each run
# is one more process start than a bare bwrap (README.md).
# libidn2 then comes linked in (idn_static.c) instead of opened (idn_dl.c).
# Otherwise drun-policy is dynamic, with nettle static when its archive is
# there (0.4 ms), and only the libraries it calls (--as-needed: libidn2 is
# opened on first use, not loaded with libcurl's list). drun-mcp stays
# dynamic: it starts once.
STATIC_A  := libc.a libm.a libjansson.a libnettle.a libidn2.a libunistring.a libfuse3.a
STATIC_IN := $(foreach a,$(STATIC_A),$(wildcard $(shell $(CC) -print-file-name=$(a))))
STATIC_OK := $(if $(filter 1,$(SAN)),,$(if $(filter $(words $(STATIC_A)),$(words $(STATIC_IN))),1))
NETTLE_A  := $(filter %/libnettle.a,$(STATIC_IN))
ifeq ($(STATIC_OK),1)
DP_LDFLAGS := -static-pie
DP_EXTRA   := $(B)/obj/compiler/policy/idn_static.o
DP_LDLIBS  := -ljansson -lnettle -lidn2 -lunistring -lfuse3 -lm
else
DP_LDFLAGS := -Wl,--as-needed
DP_EXTRA   :=
DP_LDLIBS  := $(if $(NETTLE_A),$(filter-out -lnettle,$(LDLIBS)) $(NETTLE_A),$(LDLIBS))
endif

$(B)/drun-policy: $(B)/obj/compiler/cli/main.o $(DP_EXTRA) $(SAN_OBJ) $(LIB)
	$(E) CCLD $@
	$(Q)$(CC) $(LDFLAGS) $(DP_LDFLAGS) -o $@ $^ $(DP_LDLIBS)

# libgit2 (session checkpoints, runtime/ckpt*.c) goes into drun-mcp and the
# tests that compile those files, never into the static drun-policy.
GIT2_LIBS := $(shell pkg-config --libs libgit2 2>/dev/null)

$(B)/drun-mcp: $(RT_OBJ) $(LIB)
	$(E) CCLD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(GIT2_LIBS)

$(B)/tests/test_rt_ckpt $(B)/tests/test_rt_sessfs: LDLIBS += $(GIT2_LIBS)

$(B)/tests/%: tests/unit/%.c $(LIB) | $(GEN_H)
	@mkdir -p $(@D)
	$(E) CCLD $@
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Itests/unit -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# ---- man pages: scdoc sources in docs/man, rendered and checked by tests/suites/71-man ----

man: $(MAN_PAGES)

$(B)/man/%: docs/man/%.scd
	@mkdir -p $(@D)
	$(E) SCDOC $@
	$(Q)scdoc < $< > $@

# ---- the two commands -------------------------------------------------------------

deps:
	@scripts/install-deps

# The builds run with every core (JOBS); the suites run side by side too (tests/run).
JOBS ?= $(shell nproc 2>/dev/null || echo 1)

demo: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@scripts/demo $(B)

test: deps
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@B=$(B) tests/run

unit: $(UNIT_BIN)
	@B=$(B) tests/run unit

golden: all
	@scripts/golden $(B)

bench: all
	@scripts/bench $(B)

# ---- fuzzing: clang libFuzzer + ASan + UBSan, one harness per entry point ---------------

# Each harness links the sanitizer build's own library and runtime objects
# (SAN=1 instruments them for coverage): nothing is compiled for fuzzing but
# the harness itself, and `make all SAN=1` has already built the rest.
FUZZ_FLAGS := $(CPPFLAGS) -std=c11 -O1 -g -fno-sanitize-recover=all -fsanitize=fuzzer,address,undefined $(PKG_CFLAGS)
RT_LIB     := $(B)/libdrunrt.a

$(RT_LIB): $(filter-out $(B)/obj/runtime/main.o,$(RT_OBJ))
	@rm -f $@
	$(E) AR $@
	$(Q)ar rcs $@ $^

ifeq ($(SAN),1)
build/fuzz/%: tests/fuzz/%.c $(RT_LIB) $(LIB) | $(GEN_H)
	@mkdir -p $(@D)
	$(E) CCLD $@
	$(Q)$(CC) $(FUZZ_FLAGS) -o $@ $< $(RT_LIB) $(LIB) $(PKG_LIBS) $(GIT2_LIBS) -lm
else
build/fuzz/%: FORCE
	@$(MAKE) --no-print-directory SAN=1 $@
endif
FORCE:

fuzz: deps fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz $(FUZZ_BIN)

fuzz-build: deps
	@$(MAKE) --no-print-directory SAN=1 -j$(JOBS) $(FUZZ_BIN)

# ---- formatting: clang-format-19 with .clang-format ----------------------------------

# Every hand-written C file, the one list `make format` and scripts/check-format
# (tests/suites/79-format.bats) share. Generated code lives in $(B)/gen (re2c,
# lemon, embed, seccomp_gen) and is never formatted.
CLANG_FORMAT ?= clang-format-19
FORMAT_SRC := $(sort $(wildcard grammar/*.[ch] compiler/*.[ch] compiler/*/*.[ch] runtime/*.[ch] \
                                tests/unit/*.[ch] tests/fuzz/*.[ch] tests/bench/*.[ch] tests/helpers/*.[ch] tests/lib/*.[ch] \
                                scripts/*.[ch]))

format:
	$(E) FORMAT "$(words $(FORMAT_SRC)) files"
	$(Q)$(CLANG_FORMAT) -i --style=file $(FORMAT_SRC)

format-files:
	@printf '%s\n' $(FORMAT_SRC)

# ---- install ----------------------------------------------------------------------

BINDIR  := $(DESTDIR)$(PREFIX)/bin

install: all
	install -d $(BINDIR)
	install -m 0755 $(BINS) $(BINDIR)/
	@if [ -x scripts/install-extra ]; then DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" B="$(B)" scripts/install-extra install; fi

uninstall:
	rm -f $(BINDIR)/drun-policy $(BINDIR)/drun-mcp
	@if [ -x scripts/install-extra ]; then DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" B="$(B)" scripts/install-extra uninstall; fi

clean:
	rm -rf build
