package main

import (
	"flag"
	"os"

	"github.com/littlebitlabs/minimal/miniapp"
)

// exportRootFlag defines --export-root, repeatable: the operator's export
// roots besides <data-dir>/exports and env MINIMAL_EXPORT_ROOTS.
func exportRootFlag(fs *flag.FlagSet) *[]string {
	var roots []string
	fs.Func("export-root", "a directory the MCP tools that write files (row_materialize, data_snapshot) may write under, each caller in <dir>/<org>/<project>; repeatable; besides <data-dir>/"+miniapp.DefaultExportDir+" and env "+miniapp.EnvExportRoots, func(v string) error {
		roots = append(roots, v)
		return nil
	})
	return &roots
}

// gatewayMiniApp is the mini-app face's configuration of a gateway process
// (serve, and mcp with a token file): its export roots, from the data dir,
// the --export-root flags and MINIMAL_EXPORT_ROOTS (see
// miniapp.ExportRoots).
func gatewayMiniApp(dataDir string, extra []string) (miniapp.Config, error) {
	roots, err := miniapp.ExportRoots(dataDir, extra, os.Getenv)
	return miniapp.Config{ExportRoots: roots}, err
}
