package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/reports"
)

// Summary is what Verify found in a sound bundle.
type Summary struct {
	// Files is the number of files in the bundle, SHA256SUMS included.
	Files     int
	APIServer string
	Cluster   string
	// Specs is the number of test cases of junit_01.xml; Counts tallies
	// their verdicts.
	Specs  int
	Counts reports.Counts
	// Green: every result judged pass or deviation or skipped for a fact of
	// the cluster (reports.Green, flakes tolerated only when the run said so).
	Green bool
	// Certification: run.json says the bundle is of a certification run
	// (--certify), whose every result was checked as a certification's.
	Certification bool
	// Red is why the run record says the run was red (its exit status
	// was not 0); "" when it does not.
	Red string
}

// String renders the summary as one line, e.g. "8 files, apiserver
// v1.37.2, 27 pass, 3 deviation, 0 fail, 5 skip; the run is green".
func (s Summary) String() string {
	green := "green"
	if !s.Green {
		green = "not green"
	}
	if s.Red != "" {
		green += " (" + s.Red + ")"
	}
	run := "the run"
	if s.Certification {
		run = "the certification run"
	}
	return fmt.Sprintf("%d files, apiserver %s, %s; %s is %s", s.Files, vprefix(s.APIServer), s.Counts, run, green)
}

var sumLine = regexp.MustCompile(`^([0-9a-fA-F]{64}) [ *](.+)$`)

// keepFiles are read into memory by Verify; every other member is only
// hashed.
var keepFiles = map[string]bool{SumsFile: true, JUnitFile: true, RecordFile: true}

// Verify checks a bundle: every file SHA256SUMS lists is present with that
// SHA-256, no other file is present, every file a bundle holds is there,
// junit_01.xml parses with the root <testsuites> and run.json parses. The
// error names the file at fault.
func Verify(path string) (Summary, error) {
	var sum Summary
	f, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return sum, fmt.Errorf("%s: not a gzip'd tar: %w", path, err)
	}
	tr := tar.NewReader(gz)
	hashes := map[string]string{}
	kept := map[string][]byte{}
	var order []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return sum, fmt.Errorf("%s: reading the tar: %w", path, err)
		}
		name := hdr.Name
		if hdr.Typeflag != tar.TypeReg {
			return sum, fmt.Errorf("%s: %s: not a regular file (a bundle holds only files)", path, name)
		}
		if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			return sum, fmt.Errorf("%s: %q: a bundle holds only files at its top level", path, name)
		}
		if _, dup := hashes[name]; dup {
			return sum, fmt.Errorf("%s: %s: present twice", path, name)
		}
		h := sha256.New()
		var r io.Reader = tr
		var keep bytes.Buffer
		if keepFiles[name] {
			r = io.TeeReader(tr, &keep)
		}
		if _, err := io.Copy(h, r); err != nil {
			return sum, fmt.Errorf("%s: %s: %w", path, name, err)
		}
		hashes[name] = hex.EncodeToString(h.Sum(nil))
		if keepFiles[name] {
			kept[name] = keep.Bytes()
		}
		order = append(order, name)
	}
	// The gzip trailer (CRC and length) is checked once the stream is read
	// to its end.
	if _, err := io.Copy(io.Discard, gz); err != nil {
		return sum, fmt.Errorf("%s: not a gzip'd tar: %w", path, err)
	}

	sums, ok := kept[SumsFile]
	if !ok {
		return sum, fmt.Errorf("%s: %s is missing: no checksums to verify against", path, SumsFile)
	}
	listed, err := parseSums(sums)
	if err != nil {
		return sum, fmt.Errorf("%s: %s: %w", path, SumsFile, err)
	}
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		got, present := hashes[name]
		if !present {
			return sum, fmt.Errorf("%s: %s is missing: %s lists it", path, name, SumsFile)
		}
		if !strings.EqualFold(got, listed[name]) {
			return sum, fmt.Errorf("%s: %s does not match its SHA-256 in %s: it was changed after bundling", path, name, SumsFile)
		}
	}
	for _, name := range order {
		if _, ok := listed[name]; !ok && name != SumsFile {
			return sum, fmt.Errorf("%s: %s is not listed in %s: it was added after bundling", path, name, SumsFile)
		}
	}
	for _, name := range requiredFiles {
		if _, ok := hashes[name]; !ok {
			return sum, fmt.Errorf("%s: %s is missing (every bundle holds %s)", path, name, strings.Join(requiredFiles, ", "))
		}
	}

	suites, err := reports.ReadJUnit(bytes.NewReader(kept[JUnitFile]))
	if err != nil {
		return sum, fmt.Errorf("%s: %s: %w (want one JUnit document with the root <testsuites>)", path, JUnitFile, err)
	}
	var rec reports.Record
	if err := json.Unmarshal(kept[RecordFile], &rec); err != nil {
		return sum, fmt.Errorf("%s: %s: %w", path, RecordFile, err)
	}
	var results []reports.Result
	tolerated := len(suites) > 0
	for _, s := range suites {
		results = append(results, s.Results...)
		tolerated = tolerated && s.FlakyTolerated
	}
	sum = Summary{Files: len(order), APIServer: rec.APIServer, Cluster: rec.Cluster, Specs: len(results), Counts: reports.Count(results),
		Green: reports.Green(results, tolerated)}
	if rec.Certification {
		sum.Certification = true
		if why := certified(rec, suites, results); why != "" {
			sum.Green, sum.Red = false, why
		}
	}
	if red, why := rec.Red(); red {
		// The run itself said red (a process killed before its specs
		// reported, a failed clean-up, ...): no reading of the JUnit file
		// makes it green.
		sum.Green, sum.Red = false, "run.json: "+reports.FirstLine(why)
	}
	return sum, nil
}

// certified is why a bundle of a certification run is not a certification
// ("" when it is): its JUnit suites must all say certification, nothing
// may have narrowed it, and every result must be judged but for skips for
// a fact of the release.
func certified(rec reports.Record, suites []reports.Suite, results []reports.Result) string {
	if rec.LabelFilter != "" || rec.Focus != "" || rec.Skip != "" || rec.AllowFlaky || rec.AllowedNotReadyNodes > 0 {
		return "certification: run.json records a narrowed or tolerant run"
	}
	for _, s := range suites {
		if !s.Certification && s.Name != "skewproof" {
			return fmt.Sprintf("certification: the JUnit suite %s does not say certification=true", s.Name)
		}
	}
	if ok, why := reports.CertifiedGreen(results); !ok {
		return "certification: " + why
	}
	return ""
}

// parseSums reads sha256sum lines ("<hex>  <name>" or "<hex> *<name>").
func parseSums(b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := sumLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d is not '<sha256>  <name>': %q", n, line)
		}
		name := m[2]
		if name == SumsFile {
			return nil, fmt.Errorf("line %d lists %s itself", n, SumsFile)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("line %d lists %s a second time", n, name)
		}
		out[name] = m[1]
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("lists no file")
	}
	return out, nil
}
