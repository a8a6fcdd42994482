package enforce_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snippetMarker introduces a README code block that must equal a file of
// the module byte for byte: "<!-- snippet examples/snippets/train/main.go -->"
// on the line before the block (or before another marker line).
var snippetMarker = regexp.MustCompile(`^<!-- snippet (\S+) -->$`)

// readmeSnippets are the programs README.md must show, each compiled and
// run by the test of its own package.
var readmeSnippets = []string{
	"examples/snippets/project/main.go",
	"examples/snippets/train/main.go",
	"examples/snippets/graph/main.go",
}

// TestREADMESnippets checks that every code block of README.md marked as a
// snippet is the file it names, byte for byte, and that the README shows
// the three snippets newcomers start from. The files are built and run by
// go test (examples/snippets/*/main_test.go), so the README's code cannot
// drift from code that compiles and works.
func TestREADMESnippets(t *testing.T) {
	blocks := markedBlocks(t, "README.md")
	for _, path := range readmeSnippets {
		assert.Contains(t, blocks, path, "README.md must show %s", path)
	}
	for path, block := range blocks {
		src, err := os.ReadFile(filepath.FromSlash(path))
		if !assert.NoError(t, err, "README.md's snippet names %s", path) {
			continue
		}
		assert.Equal(t, string(src), block,
			"README.md's block marked %s differs from the file: paste the file into the README", path)
	}
}

// markedBlocks returns, for each snippet marker of the Markdown file at
// path, the body of the fenced block that follows it, with a newline after
// each line, as a file's text ends.
func markedBlocks(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	blocks := make(map[string]string)
	var name string
	var body strings.Builder
	inBlock := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case inBlock && strings.HasPrefix(line, "```"):
			blocks[name] = body.String()
			name, inBlock = "", false
		case inBlock:
			body.WriteString(line + "\n")
		case name != "" && strings.HasPrefix(line, "```"):
			body.Reset()
			inBlock = true
		case name != "" && strings.HasPrefix(line, "<!--"):
		case name != "":
			t.Errorf("%s: the snippet marker for %s is not followed by a code block", path, name)
			name = ""
		default:
			if m := snippetMarker.FindStringSubmatch(line); m != nil {
				require.NotContains(t, blocks, m[1], "%s marks %s twice", path, m[1])
				name = m[1]
			}
		}
	}
	require.NoError(t, sc.Err())
	require.False(t, inBlock, "%s: unterminated code block after the marker for %s", path, name)
	return blocks
}

// mdLink matches an inline Markdown link or image, [text](target) or
// ![alt](target), capturing the target.
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// TestMarkdownLinks checks that every relative link in the module's
// Markdown files (README.md, ARCHITECTURE.md, RESULTS.md, docs/,
// examples/, …) names a file or folder that exists, and that a link to a
// heading of a Markdown file (file.md#heading, or #heading in the same
// file) names a heading that file has. Code spans and fenced blocks are
// not read; links with a scheme (https:, mailto:) are not followed.
func TestMarkdownLinks(t *testing.T) {
	var files []string
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	}))
	require.Contains(t, files, "README.md")
	anchors := make(map[string]map[string]bool)
	for _, file := range files {
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, target := range markdownLinks(string(text)) {
			if strings.Contains(target, ":") {
				continue // https:, mailto:, …
			}
			path, frag, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s: link %s: %v", file, target, err)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			if anchors[resolved] == nil {
				b, err := os.ReadFile(resolved)
				require.NoError(t, err)
				anchors[resolved] = headingAnchors(string(b))
			}
			assert.True(t, anchors[resolved][frag], "%s: link %s: %s has no heading #%s", file, target, resolved, frag)
		}
	}
}

// markdownLinks returns the link targets of a Markdown text outside code
// blocks and code spans.
func markdownLinks(text string) []string {
	var targets []string
	inBlock := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			targets = append(targets, m[1])
		}
	}
	return targets
}

// stripCodeSpans removes `code spans` from a line.
func stripCodeSpans(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: lower case, spaces to hyphens, punctuation other than
// hyphens and underscores dropped, "-1", "-2", … appended to repeats.
func headingAnchors(text string) map[string]bool {
	anchors := make(map[string]bool)
	seen := make(map[string]int)
	inBlock := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || isWordRune(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// isWordRune reports whether GitHub keeps r in a heading's anchor: letters,
// marks and digits of any script.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// TestREADMELength keeps README.md a front door (issue 29): at most 300
// lines, with the details in docs/.
func TestREADMELength(t *testing.T) {
	text, err := os.ReadFile("README.md")
	require.NoError(t, err)
	assert.LessOrEqual(t, strings.Count(string(text), "\n"), 300, "README.md: move details to docs/")
}
