//go:build tools

// Package tools imports the commands tools/k8s/build-node.sh builds, only so that `go mod tidy`
// keeps their dependencies in go.mod and go.sum (the "tools" tag keeps this file out of builds).
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
