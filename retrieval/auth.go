// auth.go — the retrieval server's optional bearer token, and the warning
// for a server that listens beyond loopback without one.
//
// What it is: a shared secret read from a file (`train serve --token-file`,
// env.search.retriever.token_file on the client side) or from the
// environment variable TokenEnv, never from a command-line value that `ps`
// would show. A server with a token answers 401 to every request whose
// Authorization header is not "Bearer <token>"; the comparison is of the
// SHA-256 digests in constant time, so neither the token's bytes nor its
// length leak through timing.
//
// What it deliberately is not: TLS. The token crosses the network in clear
// text; off a trusted network, put the server behind a TLS proxy or an SSH
// tunnel.
package retrieval

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

// TokenEnv is the environment variable `train serve` reads its token from
// when no --token-file is given.
const TokenEnv = "TROUPE_RETRIEVAL_TOKEN"

// maxTokenBytes bounds a token file (a token is a line, not a document).
const maxTokenBytes = 4096

// ReadTokenFile reads a token: the file's contents without surrounding
// white space, non-empty, at most 4 KiB, printable ASCII (it travels in an
// HTTP header).
func ReadTokenFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("retrieval: token file: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxTokenBytes {
		return "", fmt.Errorf("retrieval: token file %s: want a regular file of at most %d bytes holding one line", path, maxTokenBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("retrieval: token file: %w", err)
	}
	tok, err := checkToken(string(data))
	if err != nil {
		return "", fmt.Errorf("retrieval: token file %s: %w", path, err)
	}
	return tok, nil
}

// TokenFileWarning is one line when the token file at path can be read by
// other users, else "".
func TokenFileWarning(path string) string {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("warning: the token file %s can be read by other users (mode %04o); chmod 600 it", path, fi.Mode().Perm())
}

func checkToken(s string) (string, error) {
	tok := strings.TrimSpace(s)
	if tok == "" {
		return "", fmt.Errorf("the token is empty")
	}
	if len(tok) > maxTokenBytes {
		return "", fmt.Errorf("the token is %d bytes; at most %d", len(tok), maxTokenBytes)
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c < 0x21 || c > 0x7e {
			return "", fmt.Errorf("the token has byte %#02x at %d; use printable ASCII without spaces (e.g. openssl rand -hex 32)", c, i)
		}
	}
	return tok, nil
}

// ServerToken resolves a server's token: from file when it is set, else
// from the environment variable TokenEnv, else none (""). from says where
// it came from, for the start-up line; setting both is an error.
func ServerToken(file string) (token, from string, err error) {
	env, inEnv := os.LookupEnv(TokenEnv)
	switch {
	case file != "" && inEnv:
		return "", "", fmt.Errorf("retrieval: both --token-file and $%s are set; keep one", TokenEnv)
	case file != "":
		tok, err := ReadTokenFile(file)
		return tok, file, err
	case inEnv:
		tok, err := checkToken(env)
		if err != nil {
			return "", "", fmt.Errorf("retrieval: $%s: %w", TokenEnv, err)
		}
		return tok, "$" + TokenEnv, nil
	}
	return "", "", nil
}

// tokenCheck holds a token's digest.
type tokenCheck struct {
	set    bool
	digest [sha256.Size]byte
}

func newTokenCheck(token string) tokenCheck {
	if token == "" {
		return tokenCheck{}
	}
	return tokenCheck{set: true, digest: sha256.Sum256([]byte(token))}
}

// allows reports whether req carries the token (always, without one).
func (t tokenCheck) allows(req *http.Request) bool {
	if !t.set {
		return true
	}
	scheme, got, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	ok = ok && strings.EqualFold(scheme, "Bearer") // schemes are case-insensitive (RFC 9110 §11.1)
	d := sha256.Sum256([]byte(strings.TrimSpace(got)))
	return subtle.ConstantTimeCompare(d[:], t.digest[:]) == 1 && ok
}

// ExposureWarning is the warning for a server listening on addr: one line
// when the address is not loopback and there is no token, else "".
func ExposureWarning(addr net.Addr, hasToken bool) string {
	if hasToken {
		return ""
	}
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("warning: serving on %s, beyond loopback, without a token: anyone who can reach it can query the index and use its CPU; "+
		"set --token-file (or $%s) or bind 127.0.0.1", addr, TokenEnv)
}
