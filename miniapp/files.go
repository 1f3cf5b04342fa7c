package miniapp

import (
	"errors"
	"strings"

	"github.com/littlebitlabs/minimal/auth"
	"github.com/littlebitlabs/minimal/dialects"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/fault"
	"github.com/littlebitlabs/minimal/permissions"
	"github.com/littlebitlabs/minimal/store"
)

// The tools that act on a table's files (data_snapshot, row_restore's
// history, schema_*, the alias store) call the engine's file entry points
// (engine/files.go), which gate, audit and reach the mi source's
// capabilities; this package opens no table file itself. The helpers here
// word their answers as mini-app-mcp does.

// ref is the table as the engine's file entry points name it.
func (t *target) ref() engine.TableRef {
	return engine.TableRef{Type: "mi", Schema: t.schema, Table: t.table}
}

// tableRef names a table of a scope (which may not exist yet).
func (d scopeDir) tableRef(table string) engine.TableRef {
	return engine.TableRef{Type: "mi", Schema: d.schema, Table: table}
}

// fileOptions are the files' mode and the backup retention of this face.
func (s *Service) fileOptions() dialects.FileOptions {
	return dialects.FileOptions{Perm: s.filePerm(), Keep: BackupRetention(s.envOf())}
}

// schemaToolErr words an error of a schema_* tool: a refused right names the
// tool and the right (schema action, or the CRUD right with key_type,
// locks and templates) as mini-app's schema tools do; a failing file step
// is its contract code.
func schemaToolErr(p *auth.Principal, tool string, ref engine.TableRef, err error) error {
	var ar *engine.ActionRefused
	if errors.As(err, &ar) {
		object, roles := "mi/"+ref.Schema+"/"+ref.Table, strings.Join(p.Roles, ", ")
		if ar.Action == store.ActionSchema {
			return fault.Wrap(fault.Forbidden, err, "%s changes table definitions and needs role %s or the schema action on %s, got [%s]", tool, permissions.AdminRole, object, roles)
		}
		return fault.Wrap(fault.Forbidden, err, "%s needs the %s right on %s (key_type, locks and templates), got [%s]", tool, ar.Action, object, roles)
	}
	return fileErr(err)
}

// fileErr words the failure of a file step with the contract's code; any
// other error is returned as it is.
func fileErr(err error) error {
	var fe *dialects.FileError
	if !errors.As(err, &fe) {
		return err
	}
	switch fe.Step {
	case dialects.StepBackup:
		return backupErr(fe.Msg)
	case dialects.StepIO:
		return ioErr(fe.Err)
	case dialects.StepConfig:
		return configErr(fe.Msg)
	case dialects.StepOp:
		return batchAborted(fe.Index, fe.Msg)
	}
	return asStorage(fe.Err)
}
