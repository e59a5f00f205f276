package clitest

import (
	"path/filepath"
	"runtime"
)

// Root is the module's directory, wherever the test that asks runs.
var Root = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// Seeds is the folder of the seeds' mails (the four published benchmarks), with a slash.
var Seeds = filepath.Join(Root, "patches", "testdata") + "/"
