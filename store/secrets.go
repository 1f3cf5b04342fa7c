package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/littlebitlabs/minimal/fault"
)

// EnvMasterKey names the environment variable that, when set and not empty,
// holds the master key as base64 (standard alphabet) or 64 hex digits. It
// takes precedence over the key file.
const EnvMasterKey = "MINIMAL_MASTER_KEY"

// KeyFile is the name of the master key file inside the data directory. It
// holds 32 raw bytes (base64 or hex text is accepted too) and is created
// with mode 0600 when absent and EnvMasterKey is unset.
const KeyFile = "master.key"

// MasterKeySize is the length of the master key in bytes (AES-256).
const MasterKeySize = 32

// sealPrefix marks the format of a sealed value: AES-256-GCM, 12-byte random
// nonce, base64 of nonce||ciphertext||tag.
const sealPrefix = "v1:"

// ErrUnseal is the cause of every failure to decrypt a well-formed sealed
// value: the master key is not the one that sealed it, or the value was
// altered. Test for it with errors.Is.
var ErrUnseal = errors.New("cannot decrypt sealed value: wrong master key or tampered data")

type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (*sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "store: master key")
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "store: master key")
	}
	return &sealer{aead: aead}, nil
}

// Seal encrypts plain with the master key (AES-256-GCM, random nonce) and
// returns "v1:" followed by base64 (standard) of nonce and ciphertext.
func (s *Store) Seal(plain []byte) (string, error) {
	nonce := make([]byte, s.keys.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fault.Wrap(fault.Internal, err, "store: seal: random nonce")
	}
	out := s.keys.aead.Seal(nonce, nonce, plain, nil)
	return sealPrefix + base64.StdEncoding.EncodeToString(out), nil
}

// Unseal reverses Seal. A value that is not in the sealed format is
// fault.Invalid; a value sealed under another master key (or altered) is
// fault.Internal wrapping ErrUnseal.
func (s *Store) Unseal(sealed string) ([]byte, error) {
	body, ok := strings.CutPrefix(sealed, sealPrefix)
	if !ok {
		return nil, fault.New(fault.Invalid, "store: unseal: value is not sealed (no %q prefix)", sealPrefix)
	}
	raw, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "store: unseal: malformed sealed value")
	}
	ns := s.keys.aead.NonceSize()
	if len(raw) < ns+s.keys.aead.Overhead() {
		return nil, fault.New(fault.Invalid, "store: unseal: sealed value too short")
	}
	plain, err := s.keys.aead.Open(nil, raw[:ns], raw[ns:], nil)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, ErrUnseal,
			"store: unseal failed (is %s or %s the key the value was sealed with?)", EnvMasterKey, KeyFile)
	}
	return plain, nil
}

// loadMasterKey returns the key from EnvMasterKey, else from the key file in
// dataDir, creating that file when it does not exist.
func loadMasterKey(dataDir string) ([]byte, error) {
	if v := strings.TrimSpace(os.Getenv(EnvMasterKey)); v != "" {
		key, err := decodeKey(v)
		if err != nil {
			return nil, fault.Wrap(fault.Invalid, err, "store: %s is not a valid master key", EnvMasterKey)
		}
		return key, nil
	}
	path := filepath.Join(dataDir, KeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKeyFile(dataDir, path); err != nil {
			return nil, err
		}
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "store: read %s", path)
	}
	if len(b) == MasterKeySize {
		return b, nil
	}
	key, err := decodeKey(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err, "store: %s is not a valid master key", path)
	}
	return key, nil
}

// decodeKey accepts 64 hex digits or standard base64, and requires the
// result to be MasterKeySize bytes. The error never repeats the input.
func decodeKey(s string) ([]byte, error) {
	if len(s) == 2*MasterKeySize {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("want %d bytes as standard base64 or %d hex digits", MasterKeySize, 2*MasterKeySize)
	}
	if len(k) != MasterKeySize {
		return nil, fmt.Errorf("decodes to %d bytes, want %d", len(k), MasterKeySize)
	}
	return k, nil
}

// createKeyFile writes 32 random bytes to a private temporary file and links
// it into place, so a concurrent process either sees no key file or a
// complete one. If another process won the race, its key is kept.
func createKeyFile(dataDir, path string) error {
	key := make([]byte, MasterKeySize)
	if _, err := rand.Read(key); err != nil {
		return fault.Wrap(fault.Internal, err, "store: generate master key")
	}
	tmp, err := os.CreateTemp(dataDir, ".master.key-*")
	if err != nil {
		return fault.Wrap(fault.Internal, err, "store: create master key")
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(key)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fault.Wrap(fault.Internal, err, "store: write master key")
	}
	err = os.Link(tmpName, path)
	switch {
	case err == nil, errors.Is(err, fs.ErrExist):
		return nil
	}
	// No hard links on this file system: fall back to an exclusive create.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fault.Wrap(fault.Internal, err, "store: create %s", path)
	}
	_, err = f.Write(key)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fault.Wrap(fault.Internal, err, "store: write %s", path)
	}
	return nil
}
