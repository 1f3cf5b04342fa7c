package miniapp

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/fault"
)

// Export roots: on the gateway, the tools that write files on the server
// (row_materialize, data_snapshot) write only under the operator's export
// roots, each caller under <root>/<org>/<project> of each root, so that
// no tenant reaches another's files or anything else on the host. The
// drop-in mode (Config.Mounted) serves one local user and writes where
// that user says, as mini-app-mcp does.

// EnvExportRoots names the operator's export roots besides the default,
// separated by os.PathListSeparator (':' on Unix).
const EnvExportRoots = "MINIMAL_EXPORT_ROOTS"

// DefaultExportDir is the default export root's name in the data dir.
const DefaultExportDir = "exports"

// ExportRoots lists the gateway's export roots: <dataDir>/exports first,
// then extra (serve's --export-root flags) and the entries of
// MINIMAL_EXPORT_ROOTS read through getenv, each made absolute and clean;
// repeats are dropped.
func ExportRoots(dataDir string, extra []string, getenv func(string) string) ([]string, error) {
	all := append([]string{filepath.Join(dataDir, DefaultExportDir)}, extra...)
	if getenv != nil {
		all = append(all, filepath.SplitList(getenv(EnvExportRoots))...)
	}
	var out []string
	for _, r := range all {
		if strings.TrimSpace(r) == "" {
			continue
		}
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fault.Wrap(fault.Invalid, err, "export root %q", r)
		}
		if !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	return out, nil
}

// pathNotAllowed is PATH_NOT_ALLOWED: a file a tool would write outside
// the caller's export directories, which it names.
func pathNotAllowed(path, reason string, allowed []string) *Error {
	where := "no export root is configured on this gateway"
	if len(allowed) > 0 {
		where = "files may be written only under " + strings.Join(allowed, ", ")
	}
	return newErr(fault.Forbidden, "PATH_NOT_ALLOWED", map[string]any{"path": path, "allowed_roots": allowed},
		"path not allowed '%s': %s; %s", path, reason, where)
}

// exportBases are the caller's export directories: <root>/<org>/<project>
// of each export root, in the roots' order.
func (s *Service) exportBases(p *auth.Principal) []string {
	out := make([]string, len(s.cfg.ExportRoots))
	for i, r := range s.cfg.ExportRoots {
		out[i] = filepath.Join(r, p.Org, p.Project)
	}
	return out
}

// filePerm and dirPerm are the modes of what the tools write: the drop-in
// mode's as mini-app-mcp's, the gateway's private to its user like the
// rest of the data dir.
func (s *Service) filePerm() fs.FileMode {
	if s.cfg.Mounted {
		return 0o644
	}
	return 0o600
}

func (s *Service) dirPerm() fs.FileMode {
	if s.cfg.Mounted {
		return 0o755
	}
	return 0o700
}

// outDir resolves the directory a tool writes into. In the drop-in mode it
// is dir as given (made, with its parents, when create). On the gateway a
// relative dir is taken under the caller's first export directory; once
// `..` and symbolic links are resolved it must lie under one of the
// caller's export directories, else PATH_NOT_ALLOWED. The missing
// directories are made (when create) one at a time below the export root,
// never through a link, and the answer is the resolved directory, where
// the files go; without create it is where they would go. Other failures
// are the OS errors, for the caller to word.
func (s *Service) outDir(p *auth.Principal, dir string, create bool) (string, error) {
	if s.cfg.Mounted {
		if create {
			if err := os.MkdirAll(dir, s.dirPerm()); err != nil {
				return "", err
			}
		}
		return dir, nil
	}
	bases := s.exportBases(p)
	if len(bases) == 0 {
		return "", pathNotAllowed(dir, "outside the export roots", nil)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(bases[0], dir)
	}
	dir = filepath.Clean(dir)
	for i, root := range s.cfg.ExportRoots {
		if create {
			// The root itself is the operator's: made as configured.
			if err := os.MkdirAll(root, s.dirPerm()); err != nil {
				return "", err
			}
		}
		real, err := filepath.EvalSymlinks(root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		for _, r := range []string{root, real} {
			if r == "" {
				continue
			}
			rel, ok := below(filepath.Join(r, p.Org, p.Project), dir)
			if !ok {
				continue
			}
			if real == "" {
				// Nothing exists yet (no create): the files would go where
				// the path reads.
				return dir, nil
			}
			top := filepath.Join(real, p.Org, p.Project)
			parts := append([]string{p.Org, p.Project}, strings.Split(rel, string(filepath.Separator))...)
			return s.walk(real, top, parts, create, bases[i])
		}
	}
	return "", pathNotAllowed(dir, "outside the export roots", bases)
}

// below reports whether path (clean, absolute) is base or lies under it,
// and the rest of it ("." for base itself).
func below(base, path string) (string, bool) {
	rel, err := filepath.Rel(base, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// walk goes down from cur (a resolved directory) through parts, keeping
// below top (the caller's resolved export directory, shown as base): an
// existing part must be a directory, or a symbolic link whose target,
// resolved, is one under top; a missing part is made when create, else the
// rest of the path is taken as it reads.
func (s *Service) walk(cur, top string, parts []string, create bool, base string) (string, error) {
	for i := 0; i < len(parts); i++ {
		if parts[i] == "." || parts[i] == "" {
			continue
		}
		next := filepath.Join(cur, parts[i])
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !create:
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(next, s.dirPerm()); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", err
			}
			i-- // made, or made by someone else meanwhile: look at it again
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(next)
			if err != nil {
				return "", pathNotAllowed(next, "a symbolic link that leads nowhere", []string{base})
			}
			if _, ok := below(top, real); !ok {
				return "", pathNotAllowed(next, "a symbolic link out of the export directory", []string{base})
			}
			if fi, err = os.Stat(real); err != nil {
				return "", err
			}
			next = real
		}
		if !fi.IsDir() {
			return "", &fs.PathError{Op: "mkdir", Path: next, Err: errors.New("not a directory")}
		}
		cur = next
	}
	return cur, nil
}

// outFile is where a tool writes the file name in dir (as outDir answered
// it). On the gateway, name must be one path element and must not be a
// symbolic link: the file is written through a temporary file (created
// new, O_EXCL) renamed or linked onto the name, which replaces what is
// there and never follows it, and a link already there is refused rather
// than replaced. In the drop-in mode the path is dir/name as given.
func (s *Service) outFile(p *auth.Principal, dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	if s.cfg.Mounted {
		return dir + "/" + name, nil
	}
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, filepath.Separator) {
		return "", pathNotAllowed(path, "not a file name", s.exportBases(p))
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", pathNotAllowed(path, "a symbolic link", s.exportBases(p))
	}
	return path, nil
}
