# addrclean — see README.md.
GO        ?= go
BIN       := bin/addrclean
STATICCHECK_VERSION := v0.8.2
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $(shell $(GO) env GOPATH)/bin/staticcheck)
FUZZTIME  ?= 10s
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: all build test vet staticcheck race bench demo fuzz sample-data clean

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/addrclean

vet:
	$(GO) vet ./...

# A fresh clone has no staticcheck: install the pinned version first.
staticcheck:
	@test -x "$(STATICCHECK)" || { echo "installing staticcheck $(STATICCHECK_VERSION)"; \
	  $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); }
	$(STATICCHECK) ./...

# go test through internal/testsum: the same output as go test without -v,
# then one line naming the tests skipped because Chromium or PostgreSQL is
# missing, and the command that installs it.
#
# RACE_GCFLAGS turns off, for the modernc.org packages only (SQLite
# transpiled from C, and its libc), the unsafe-pointer checks (checkptr) that
# -race adds to every package: they check the library's own pointer
# arithmetic, not ours, and cost a third of the journal's test time. The race
# detector itself still instruments every package. docs/testing.md has the
# figures and why the detector stays on for these packages.
RACE_GCFLAGS ?= -gcflags=modernc.org/...=-d=checkptr=0
race:
	$(GO) run ./internal/testsum -race $(RACE_GCFLAGS) -count=1 ./...

test: vet staticcheck race

# Benchmarks: go test -bench over every package, then the end-to-end table of
# the real binary (rows/s, CPU per row, peak RSS, rate utilisation).
# BENCH_ROWS and BENCH_REFERENCE size the end-to-end runs.
BENCH_ROWS      ?= 100000,1000000
BENCH_REFERENCE ?= 100000
# The table runs (internal/benchdb): the same rows from a CSV file, a
# PostgreSQL table (a server the tool starts) and an SQLite table.
BENCH_DB_ROWS   ?= 100000
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./internal/benchtable -bin $(BIN) -rows $(BENCH_ROWS) -reference $(BENCH_REFERENCE)
	$(GO) run ./internal/benchdb -bin $(BIN) -rows $(BENCH_DB_ROWS) -reference $(BENCH_REFERENCE)

demo: build
	@mkdir -p out
	@# Exit 3 means "finished, some rows are Error": expected for the messy sample.
	./$(BIN) run --country IE -o out/customers.cleaned.csv --review out/customers.review.csv sample_data/customers.csv || [ $$? -eq 3 ]

# Short runs of every fuzz target (FUZZTIME each).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 0 $$pkg; \
	  done; \
	done

sample-data:
	$(GO) run ./sample_data/gen

clean:
	rm -rf bin out
	$(GO) clean -testcache
