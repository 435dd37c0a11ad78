#!/usr/bin/env bash
# The benchmark's quick mode: every workload against every server
# (toolwire, go-sdk, mcp-go, the net/http floor) at tiny sizes, so the
# benchmark never rots. It checks every reply and never a time; it exits
# non-zero on any incorrect reply. bench/ is its own Go module, so it is
# vetted, staticchecked (the same pinned staticcheck as the root module's)
# and tested here, not by the root steps.
set -euo pipefail
cd "$(dirname "$0")/../../bench"
go vet ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
go test -count=1 ./...
go run ./cmd/bench -quick
