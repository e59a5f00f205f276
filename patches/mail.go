// Package patches reads patches as people bring them (an mbox of one or many mails, `git
// format-patch` files, a plain unified diff), refuses what cannot be built safely, and checks
// and applies them to a kernel source, saying how each hunk applied (exact, offset, fuzz) or
// which context lines the source lacks. It is pure: the source is read through an fs.FS and
// the patched files are returned, not written.
package patches

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
)

// Bounds of what Read takes: a patch series is kilobytes to a few megabytes; an input far
// beyond them is not a patch somebody means to build.
const (
	MaxInputSize = 32 << 20
	MaxMessages  = 1000
)

// Patch is one patch, or one mail without a diff (a cover letter, a stable-queue notice).
type Patch struct {
	// Input is the file it came from; Line the line its mail (or diff) starts on there.
	Input string `json:"input"`
	Line  int    `json:"line"`
	// Subject is as written; Title without its [PATCH ...] prefix.
	Subject   string `json:"subject,omitempty"`
	Title     string `json:"title,omitempty"`
	Author    string `json:"author,omitempty"`
	MessageID string `json:"message_id,omitempty"`
	Date      string `json:"date,omitempty"`
	// Index and Total are N and M of "[PATCH N/M]"; Version is v8's 8; 0 where not written.
	Index   int `json:"index,omitempty"`
	Total   int `json:"total,omitempty"`
	Version int `json:"version,omitempty"`
	// Message is the text before the diff (the commit message and notes); its first line is
	// line MessageLine of the input.
	Message     string `json:"-"`
	MessageLine int    `json:"-"`
	// DiffError is why the diff could not be read (ReadMessages only).
	DiffError string `json:"-"`
	// SHA256 is of the patch's bytes: a mail's whole text (its headers and body as the mbox
	// holds them, line ends as LF), a plain diff's whole input as given (what `sha256sum`
	// says of the file). Every patch has one, with or without a diff: a build's cache key
	// takes it, so two patches that differ in any byte never share a build.
	SHA256 string     `json:"sha256"`
	Files  []FileDiff `json:"-"`
}

// HasDiff says whether the patch changes any file.
func (p Patch) HasDiff() bool { return len(p.Files) > 0 }

// Name is how messages name the patch: its title, or its input.
func (p Patch) Name() string {
	if p.Title != "" {
		return fmt.Sprintf("%q", p.Title)
	}
	return p.Input
}

// InputError is input that is not a patch nsperf can build, with where and why (exit 2).
type InputError struct {
	Input string
	Line  int // 0: the input as a whole
	Msg   string
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Input, e.Line, e.Msg)
	}
	return e.Input + ": " + e.Msg
}

func inputErr(input string, line int, format string, args ...any) error {
	return &InputError{Input: input, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Read reads the patches in one input: an mbox of one or many mails, a `git format-patch`
// file, or a plain unified diff. A mail without a diff is returned as a patch without Files.
func Read(input string, data []byte) ([]Patch, error) {
	return read(input, data, false)
}

// ReadMessages reads the mails of an input as Read does, for their messages: a diff that
// cannot be read (cut, mangled) does not fail the input but is said in the patch's
// DiffError, without Files.
func ReadMessages(input string, data []byte) ([]Patch, error) {
	return read(input, data, true)
}

func read(input string, data []byte, lenient bool) ([]Patch, error) {
	if len(data) > MaxInputSize {
		return nil, inputErr(input, 0, "%d bytes: more than %d MiB is not a patch series", len(data), MaxInputSize>>20)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, inputErr(input, 0, "a binary file (it has NUL bytes), not a patch or a mail")
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if lenient {
		text = headersEndAtBlank(text)
	}
	first, _, _ := strings.Cut(text, "\n")
	if !postmarkRe.MatchString(first) {
		if note, mail, ok := afterNote(text); ok && lenient {
			// "Source: URL" and a blank line before a mail copied from an archive.
			ps, err := read(input, []byte(mail), lenient)
			for k := range ps {
				ps[k].Line += note
				ps[k].MessageLine += note
			}
			return ps, err
		}
		if !looksLikeMail(text) {
			p, err := plainDiff(input, 1, text, lenient)
			if err != nil {
				return nil, err
			}
			// A plain diff has no mail to hash: its bytes are the input's. Without them two
			// diffs of the same files and hunk counts would be one build in the cache.
			sum := sha256.Sum256(data)
			p.SHA256 = hex.EncodeToString(sum[:])
			return []Patch{p}, nil
		}
		// One mail without the mbox separator: one is added, and taken out of the line numbers.
		ps, err := read(input, []byte("From nsperf Thu Jan  1 00:00:00 1970\n"+text), lenient)
		for k := range ps {
			ps[k].Line = max(ps[k].Line-1, 1)
			ps[k].MessageLine--
		}
		return ps, err
	}
	var out []Patch
	for _, m := range splitMbox(text) {
		if len(out) == MaxMessages {
			return nil, inputErr(input, m.line, "more than %d mails: give the series' patches, not an archive", MaxMessages)
		}
		if lenient {
			m.text = headersEndAtBlank(m.text)
		}
		p, err := readMail(input, m.line, m.text, lenient)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// looksLikeMail: a mail without an mbox "From " line starts with a block of header lines
// that names its sender or subject ("Before: 1 Gbps" is not one).
func looksLikeMail(text string) bool {
	block, _, _ := strings.Cut(text, "\n\n")
	known := false
	for _, l := range strings.Split(block, "\n") {
		if !headerLineRe.MatchString(l) {
			return false
		}
		known = known || senderHeaderRe.MatchString(l)
	}
	return known
}

// afterNote splits off a note of at most three lines before a mail: the number of lines
// it took and the mail.
func afterNote(text string) (int, string, bool) {
	note, rest, ok := strings.Cut(text, "\n\n")
	if !ok || strings.Count(note, "\n") > 2 || looksLikeMail(text) {
		return 0, "", false
	}
	rest = headersEndAtBlank(strings.TrimLeft(rest, "\n"))
	if !looksLikeMail(rest) {
		return 0, "", false
	}
	return strings.Count(text[:len(text)-len(rest)], "\n"), rest, true
}

var (
	headerLineRe   = regexp.MustCompile(`^[A-Za-z-]+: |^[ \t]`)
	senderHeaderRe = regexp.MustCompile(`(?i)^(from|subject|message-id): `)
)

// headersEndAtBlank makes a line of spaces that ends a mail's header block an empty line, as
// a reader sees it: copied from an archive or an editor, the empty line after the headers
// often holds a space, and net/mail would read it as a folded header and the first paragraph
// as more headers. A leading mbox postmark line is kept; text that does not start with
// header lines is returned as it is.
func headersEndAtBlank(text string) string {
	offset := 0
	if first, _, _ := strings.Cut(text, "\n"); postmarkRe.MatchString(first) {
		offset = len(first) + 1
	}
	for pos, n := offset, 0; pos < len(text); n++ {
		l, _, _ := strings.Cut(text[pos:], "\n")
		switch {
		case l == "":
			return text
		case strings.TrimSpace(l) == "" && n > 0:
			return text[:pos] + text[pos+len(l):]
		case !headerLineRe.MatchString(l) || (n == 0 && strings.TrimSpace(l) == ""):
			return text
		}
		pos += len(l) + 1
	}
	return text
}

type mboxMessage struct {
	line int // of its "From " line
	text string
}

// postmarkRe is an mbox separator: "From SENDER DATE", the date as asctime writes it with an
// optional zone ("From 1f2e... Mon Sep 17 00:00:00 2001", git format-patch's; "From
// a@b.org Thu Dec  3 10:00:00 2026"). A body's paragraph that starts "From " (prose, which
// git format-patch does not escape) is no separator.
var postmarkRe = regexp.MustCompile(`^From \S+ +(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) +(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} +\d{1,2}:\d{2}(?::\d{2})?(?: +\S+)? +\d{4}\s*$`)

// splitMbox splits an mbox at postmark lines ("From SENDER DATE") that start the input or
// follow an empty line (mboxo/mboxrd), and unescapes ">From " in bodies.
func splitMbox(text string) []mboxMessage {
	lines := strings.SplitAfter(text, "\n")
	var out []mboxMessage
	var cur *strings.Builder
	prevEmpty := true
	for i, l := range lines {
		if prevEmpty && strings.HasPrefix(l, "From ") && postmarkRe.MatchString(strings.TrimRight(l, "\n")) {
			out = append(out, mboxMessage{line: i + 1})
			cur = &strings.Builder{}
			prevEmpty = false
			continue
		}
		if cur != nil {
			if strings.HasPrefix(strings.TrimLeft(l, ">"), "From ") && strings.HasPrefix(l, ">") {
				l = l[1:]
			}
			cur.WriteString(l)
			out[len(out)-1].text = cur.String()
		}
		prevEmpty = strings.TrimSpace(l) == ""
	}
	return out
}

var subjectTag = regexp.MustCompile(`^\s*((?:\[[^\]]*\]\s*)+)(.*)$`)

// readMail reads one mail: its headers, its body decoded, its diff.
func readMail(input string, line int, text string, lenient bool) (Patch, error) {
	msg, err := mail.ReadMessage(strings.NewReader(text))
	if err != nil {
		return Patch{}, inputErr(input, line, "not a mail: %v", err)
	}
	body, err := decodeBody(msg)
	if err != nil {
		return Patch{}, inputErr(input, line, "the mail's body: %v", err)
	}
	headerLines := strings.Count(text[:len(text)-len(rawBody(text))], "\n")
	p, err := plainDiff(input, line+1+headerLines, body, lenient)
	if err != nil {
		return Patch{}, err
	}
	dec := mime.WordDecoder{}
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		subject = msg.Header.Get("Subject")
	}
	subject = strings.Join(strings.Fields(subject), " ")
	p.Line, p.Subject, p.Title = line, subject, subject
	if m := subjectTag.FindStringSubmatch(subject); m != nil {
		p.Title = m[2]
		p.Index, p.Total, p.Version = seriesPosition(m[1])
	}
	if from, err := dec.DecodeHeader(msg.Header.Get("From")); err == nil {
		p.Author = strings.TrimSpace(from)
	}
	p.MessageID = strings.Trim(strings.TrimSpace(msg.Header.Get("Message-ID")), "<>")
	p.Date = msg.Header.Get("Date")
	sum := sha256.Sum256([]byte(text))
	p.SHA256 = hex.EncodeToString(sum[:])
	return p, nil
}

// rawBody is the text after the mail's header block.
func rawBody(text string) string {
	if i := strings.Index(text, "\n\n"); i >= 0 {
		return text[i+2:]
	}
	return ""
}

var seriesRe = regexp.MustCompile(`(?:^|[\s\[])(\d+)/(\d+)(?:$|[\s\]])`)
var versionRe = regexp.MustCompile(`(?i)(?:^|[\s\[])v(\d+)(?:$|[\s\]])`)

// seriesPosition reads "7/9" and "v8" from a subject's tags.
func seriesPosition(tags string) (index, total, version int) {
	if m := seriesRe.FindStringSubmatch(tags); m != nil {
		index, _ = strconv.Atoi(m[1])
		total, _ = strconv.Atoi(m[2])
	}
	if m := versionRe.FindStringSubmatch(tags); m != nil {
		version, _ = strconv.Atoi(m[1])
	}
	return index, total, version
}

// decodeBody returns the body with its transfer encoding undone, a multipart body as the
// text of its text parts (multipartBody).
func decodeBody(msg *mail.Message) (string, error) {
	var r io.Reader = msg.Body
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(msg.Header.Get("Content-Type"))), "multipart/") {
		raw, err := io.ReadAll(r)
		if err != nil {
			return "", err
		}
		body := strings.ReplaceAll(string(raw), "\r\n", "\n")
		if text, ok := multipartBody(msg.Header.Get("Content-Type"), body, 0); ok {
			return text, nil
		}
		r = strings.NewReader(body)
	}
	switch strings.ToLower(strings.TrimSpace(msg.Header.Get("Content-Transfer-Encoding"))) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, newlineStripper{r})
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", fmt.Errorf("a binary attachment, not a patch")
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), nil
}

// newlineStripper drops line breaks, which base64 bodies carry every 76 characters.
type newlineStripper struct{ r io.Reader }

func (n newlineStripper) Read(p []byte) (int, error) {
	for {
		k, err := n.r.Read(p)
		j := 0
		for _, c := range p[:k] {
			if c != '\n' && c != '\r' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}
