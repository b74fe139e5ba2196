package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// secretToken is the bearer token of the kubeconfigs below; it must never
// appear in what skewproof prints or writes.
const secretToken = "skewproof-secret-token-7c41e09b2fd35a86"

// clientKeyPair returns a client certificate and its private key as PEM.
func clientKeyPair(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "skewproof-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// secretKubeconfig is a kubeconfig for server with the token and the client
// key, or (userOverride) with a user entry of one's own.
func secretKubeconfig(server string, cert, key []byte, user string) string {
	if user == "" {
		user = fmt.Sprintf("    token: %s\n    client-certificate-data: %s\n    client-key-data: %s\n",
			secretToken, base64.StdEncoding.EncodeToString(cert), base64.StdEncoding.EncodeToString(key))
	}
	return fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: %s\n    insecure-skip-tls-verify: true\n"+
		"users:\n- name: u\n  user:\n%scontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n", server, user)
}

// TestNoSecretLeaks: commands that read a kubeconfig holding a token and a
// client key — against an API server that is not there, one that forbids
// everything, and with the credentials themselves malformed — never print
// the token or the key, nor write them anywhere (the --junit-dir, $HOME,
// $TMPDIR, the cache directory).
func TestNoSecretLeaks(t *testing.T) {
	withServedCache(t)
	cert, key := clientKeyPair(t)
	keyB64 := base64.StdEncoding.EncodeToString(key)
	block, _ := pem.Decode(key)
	secrets := map[string]string{
		"token":                   secretToken,
		"client-key-data":         keyB64,
		"client key (PEM body)":   base64.StdEncoding.EncodeToString(block.Bytes)[:40],
		"client key (PEM, split)": strings.Split(string(key), "\n")[1][:40],
		"malformed key":           "c2tld3Byb29mLW5vdC1hLWtleS0zOWQ3",
		"token in a bad document": "skewproof-secret-in-a-string-5e2d",
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(forbidAll))
	t.Cleanup(srv.Close)
	fx := t.TempDir()
	kubeconfigs := map[string]string{
		"nothing":   secretKubeconfig("https://127.0.0.1:1", cert, key, ""),
		"forbidden": secretKubeconfig(srv.URL, cert, key, ""),
		"bad-key":   secretKubeconfig("https://127.0.0.1:1", nil, nil, "    token: "+secretToken+"\n    client-key-data: "+secrets["malformed key"]+"\n"),
		// The user entry a string where a mapping belongs: a type error of
		// the loader, which must not quote the value.
		"user-a-string": "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\n" +
			"users:\n- name: u\n  user: " + secrets["token in a bad document"] + "\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
	}
	for name, content := range kubeconfigs {
		if err := os.WriteFile(filepath.Join(fx, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	suiteBin := filepath.Join(fx, "skewproof-e2e.test")
	if err := os.WriteFile(suiteBin, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	capDir := t.TempDir()
	home, tmp, work := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", tmp)
	t.Chdir(work)
	cache := os.Getenv("SKEWPROOF_CACHE_DIR")
	ran := 0
	for kc := range kubeconfigs {
		path := filepath.Join(fx, kc)
		for _, args := range [][]string{
			{"run", "--kubeconfig", path, "--suite-binary", suiteBin, "--junit-dir", filepath.Join(work, "results")},
			{"profiles", "status", "--kubeconfig", path},
			{"profiles", "install", "--kubeconfig", path, "--timeout", "2s"},
			{"profiles", "teardown", "--kubeconfig", path},
		} {
			code, stdout, stderr := captureRun(t, capDir, 90*time.Second, args...)
			ran++
			t.Logf("%s %s: exit %d: %s", kc, args[:2], code, strings.TrimSpace(stderr))
			if code == 0 {
				t.Errorf("%s: %q succeeded against a cluster that is not there", kc, args[:2])
			}
			for what, s := range secrets {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("%s: %q printed the %s:\n%s%s", kc, args[:2], what, stdout, stderr)
				}
			}
		}
	}
	// What was written, and what was printed into the capture files.
	for _, root := range []string{work, home, tmp, cache, capDir} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(p)
			for what, s := range secrets {
				if strings.Contains(string(b), s) {
					t.Errorf("%s holds the %s", p, what)
				}
			}
			return nil
		})
	}
	if ran != 16 {
		t.Errorf("%d commands ran, want 16", ran)
	}
}
