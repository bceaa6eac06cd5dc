package tokenizer

import (
	"path"
	"strings"
)

// Reasons a path is left out of the text sent.
const (
	Lockfile  = "lockfile"
	Vendored  = "vendored"
	Generated = "generated"
)

var lockfiles = map[string]bool{
	"package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true,
	"pnpm-lock.yaml": true, "bun.lockb": true, "go.sum": true, "go.work.sum": true,
	"Cargo.lock": true, "poetry.lock": true, "Pipfile.lock": true, "uv.lock": true,
	"pdm.lock": true, "Gemfile.lock": true, "composer.lock": true, "mix.lock": true,
	"flake.lock": true, "pubspec.lock": true, "Podfile.lock": true, "Package.resolved": true,
	"packages.lock.json": true, "gradle.lockfile": true, "deno.lock": true,
}

// vendorDirs are directory names whose contents are someone else's code.
var vendorDirs = map[string]bool{
	"vendor": true, "node_modules": true, "third_party": true, "third-party": true,
	"thirdparty": true, "bower_components": true, "Pods": true, "Carthage": true,
	".yarn": true,
}

var generatedSuffixes = []string{
	".pb.go", ".pb.gw.go", "_pb2.py", "_pb2_grpc.py", ".pb.h", ".pb.cc", "_grpc.pb.go",
	".min.js", ".min.css", ".js.map", ".css.map", ".g.dart", ".freezed.dart",
	".designer.cs", "_generated.go", ".generated.go", ".gen.go", ".snap",
}

// SkipPath says why a changed path should not be sent, or "" to send it.
// It decides from the path alone, before any blob is read.
func SkipPath(p string) string {
	base := path.Base(p)
	if lockfiles[base] || strings.HasSuffix(base, ".lock") {
		return Lockfile
	}
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if vendorDirs[dir] {
			return Vendored
		}
	}
	if strings.HasPrefix(base, "zz_generated") {
		return Generated
	}
	for _, suf := range generatedSuffixes {
		if strings.HasSuffix(base, suf) {
			return Generated
		}
	}
	return ""
}
