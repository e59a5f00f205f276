package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// docsCmd writes the command reference generated from the command tree itself, so that it
// says what --help says: a markdown page per command (docs/reference, committed: make docs) and
// a man page per command (make man).
func docsCmd() *cobra.Command {
	var markdown, man string
	c := &cobra.Command{
		Use:    "docs [--markdown DIR] [--man DIR]",
		Short:  "Write the command reference from the command tree: a markdown page and a man page per command",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if markdown == "" && man == "" {
				return usageError{errors.New("give --markdown DIR, --man DIR or both")}
			}
			return writeReference(c.Root(), markdown, man)
		},
	}
	c.Flags().StringVar(&markdown, "markdown", "", "write a markdown page per command into DIR (docs/reference)")
	c.Flags().StringVar(&man, "man", "", "write a man page per command into DIR (section 1)")
	return c
}

// writeReference writes the pages of root's tree (hidden commands left out), without the
// date cobra would stamp on them: the committed reference changes only with the commands.
func writeReference(root *cobra.Command, markdown, man string) error {
	root.DisableAutoGenTag = true
	root.InitDefaultCompletionCmd() // as Execute adds it: the pages are the same however the tree was made
	if markdown != "" {
		if err := os.MkdirAll(markdown, 0o755); err != nil {
			return err
		}
		if err := doc.GenMarkdownTree(root, markdown); err != nil {
			return fmt.Errorf("markdown reference: %w", err)
		}
	}
	if man != "" {
		if err := os.MkdirAll(man, 0o755); err != nil {
			return err
		}
		header := &doc.GenManHeader{Title: "NSPERF", Section: "1", Source: "nsperf", Manual: "nsperf manual"}
		if err := doc.GenManTree(root, header, man); err != nil {
			return fmt.Errorf("man pages: %w", err)
		}
	}
	return nil
}
