package main

import (
	"context"
	"fmt"
	"io"

	"github.com/littlebitlabs/minimal/store"
)

// cmdSpace manages spaces: `space mcp … on|off` switches the MCP face of a
// space (without on|off it prints the current state). A running server
// applies the switch to the next request.
func cmdSpace(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "mcp" {
		return usagef("space: say mcp (minimal space mcp --org O --project P --space S on|off)")
	}
	fs := newFlags("space mcp", stderr)
	dataDir := dataDirFlag(fs)
	org := fs.String("org", "demo", "org name")
	project := fs.String("project", "demo", "project name")
	space := fs.String("space", "main", "space name")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var on *bool
	switch rest := fs.Args(); {
	case len(rest) == 0:
	case len(rest) == 1 && (rest[0] == "on" || rest[0] == "off"):
		v := rest[0] == "on"
		on = &v
	default:
		return usagef("space mcp: say on or off after the flags, got %q", rest)
	}
	st, err := store.Open(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	_, proj, err := resolveProject(ctx, st, *org, *project)
	if err != nil {
		return err
	}
	sp, err := st.Space(ctx, proj.ID, *space)
	if err != nil {
		return err
	}
	if on != nil {
		if err := st.SetSpaceMCP(ctx, sp.ID, *on); err != nil {
			return err
		}
		sp.MCPEnabled = *on
	}
	state := "off"
	if sp.MCPEnabled {
		state = "on"
	}
	fmt.Fprintf(stdout, "MCP is %s for space %s of %s/%s\n", state, sp.Name, *org, *project)
	return nil
}
