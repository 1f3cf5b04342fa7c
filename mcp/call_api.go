package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/littlebitlabs/minimal/custom"
	"github.com/littlebitlabs/minimal/engine"
	"github.com/littlebitlabs/minimal/wire"
)

// callAPIName is the tool that calls custom APIs; help on it lists the
// APIs the caller may call.
const callAPIName = "call_api"

// callAPITool calls a custom API: the MCP twin of
// /minimal/api/rest/custom/v1/{org}/{project}/{uri}?version=N, with the
// same answers and refusals (engine.CallAPI does the work for both).
var callAPITool = &tool{
	name: callAPIName, session: true, destructive: true, customAPIs: true,
	brief:  "Call a custom API.",
	output: json.RawMessage(`{"type":"object","properties":{"data":{"type":"array"},"rows_affected":{"type":"integer"}},"anyOf":[{"required":["data"]},{"required":["rows_affected"]}]}`),
	desc:   `Call a custom API of your project (meta_list_custom_apis lists those you may call, with their parameters). A read returns {"data": [rows]}, a write {"rows_affected": n}.`,
	params: []param{
		{name: "uri", kind: kString, required: true, desc: `The API's uri, e.g. "employees/by-department".`},
		{name: "method", kind: kString, required: true, desc: "GET, POST, PUT or DELETE, as the API is defined."},
		{name: "version", kind: kInteger, required: true, min: 1, desc: "The API's version, 1 or more."},
		{name: "params", kind: kQuery, desc: `The API's parameters, name to value: {"dept": 6}. Values are strings, numbers or booleans; dates, timestamps and uuids are strings.`},
	},
	example: `{"uri": "employees/by-department", "method": "GET", "version": 1, "params": {"dept": 6}}`,
	run:     (*Server).callAPI,
}

// listCustomAPIsTool lists the custom APIs the caller may call.
var listCustomAPIsTool = &tool{
	name: "meta_list_custom_apis", session: true, readOnly: true, customAPIs: true,
	brief:   "Your custom APIs.",
	output:  outputList("apis"),
	desc:    "List the custom APIs you may call with call_api: uri, method, version, mode (read or write), description and typed parameters.",
	example: `{}`,
	run:     (*Server).listCustomAPIs,
}

func (s *Server) callAPI(ctx context.Context, c *call) (answer, error) {
	res, err := s.eng.CallAPI(ctx, c.p, &engine.CustomCall{
		Org: c.p.Org, Project: c.p.Project,
		URI:     strings.Trim(c.args.str("uri"), "/"),
		Method:  strings.ToUpper(c.args.str("method")),
		Version: int(min(c.args.int("version"), 1<<31)),
		Params:  c.args.obj("params"),
	})
	if err != nil {
		return answer{}, err
	}
	if res.Write {
		return answer{text: wire.AppendWriteResult(nil, res.RowsAffected, nil, nil), rows: res.RowsAffected}, nil
	}
	defer res.Rows.Close()
	var buf bytes.Buffer
	n, err := wire.Stream(&buf, wire.JSON, res.Rows, nil)
	if err != nil {
		return answer{}, err
	}
	return answer{text: bytes.TrimSuffix(buf.Bytes(), []byte("\n")), rows: n}, nil
}

// customInfos describes the custom APIs the caller may call.
func (s *Server) customInfos(ctx context.Context, c *call) ([]custom.Info, error) {
	defs, err := s.eng.CustomAPIs(ctx, c.p, c.p.Org, c.p.Project)
	if err != nil {
		return nil, err
	}
	out := make([]custom.Info, len(defs))
	for i, d := range defs {
		out[i] = custom.Describe(d)
	}
	return out, nil
}

func (s *Server) listCustomAPIs(ctx context.Context, c *call) (answer, error) {
	infos, err := s.customInfos(ctx, c)
	if err != nil {
		return answer{}, err
	}
	a, err := jsonAnswer(infos, "apis")
	a.rows = int64(len(infos))
	return a, err
}
