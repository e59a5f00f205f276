// Package exitcode is nsperf's exit codes, as docs/commands.md lists them: the command maps
// its errors to them, and the tests that run the binary assert them.
package exitcode

// Exit codes.
const (
	OK          = 0
	Expectation = 1 // an expectation failed or a gated significant regression
	Usage       = 2 // usage, an invalid scenario or an input that is not what it should be
	Infra       = 3 // a tool failed, the kernel refused, a build failed
	Skipped     = 4 // a capability the scenario needs is missing
	Undecided   = 5 // reproduce: a claim that can be reproduced here was not decided
	Interrupted = 130
)
