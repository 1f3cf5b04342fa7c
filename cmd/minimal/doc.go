// Command minimal is the gateway binary: flags, wiring and subcommands
// (serve, token, db, migrate, version). It holds no logic of its own; the
// packages it wires do the work.
package main
