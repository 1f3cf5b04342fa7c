package main

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// cmdSpace manages spaces: `space mcp … on|off` switches the MCP face of a
// space (without on|off it prints the current state). A running server
// applies the switch to the next request.
func cmdSpace(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("space mcp", stderr)
	dataDir := dataDirFlag(fs)
	ref := projectFlags(fs)
	space := fs.String("space", "main", "space name")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	var on *bool
	switch rest := fs.Args(); {
	case len(rest) == 0:
	case len(rest) == 1 && (rest[0] == "on" || rest[0] == "off"):
		v := rest[0] == "on"
		on = &v
	default:
		return usagef("space mcp: say on or off after the flags, not %q", strings.Join(rest, " "))
	}
	st, org, project, proj, err := ref.open(ctx, "space mcp", *dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
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
	fmt.Fprintf(stdout, "MCP is %s for space %s of %s/%s\n", state, sp.Name, org, project)
	return nil
}
