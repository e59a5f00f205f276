// Package inputerr is the error of an input the caller gave that cannot be used (a kernel, a
// module tree, a patch, a source, a config): the caller's mistake, exit 2, said with what to
// give instead. Preparing kernels and building them both say it; the command maps it once.
package inputerr

// Error is an unusable input.
type Error struct{ Err error }

func (e Error) Error() string { return e.Err.Error() }
func (e Error) Unwrap() error { return e.Err }
