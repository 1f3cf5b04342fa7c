package mcp

// SetDirect switches the direct road of the HTTP face on or off.
func (s *Server) SetDirect(on bool) { s.noDirect.Store(!on) }

// DirectCalls counts the calls the direct road answered.
func (s *Server) DirectCalls() int64 { return s.directCalls.Load() }
