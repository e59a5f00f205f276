// Package envinfo is what a result records of the machine it was measured on: the facts,
// and the tools whose versions it asks for. machine/host collects them (host.Collect).
package envinfo

// Tool is a program whose version a result records.
type Tool struct {
	Name  string
	Argv  []string            // prints the version
	Parse func(string) string // reads it; nil keeps the first line of the output
}

// Facts are what a result records of the machine (results.Environment, filled in from them).
type Facts struct {
	KernelRelease, KernelVersion, Machine, Hostname string
	CPUModel                                        string
	CPUs                                            int
	Tools                                           map[string]string // name -> version
}
