// Package bootstrap makes an empty data directory usable at first start: the
// demo org, project and space, the admin and agent identities, a mini-app
// database with a sample table, and the token files. Every step is
// get-or-create, so a start interrupted halfway completes on the next one.
//
// bootstrap imports store, auth, dialects and dialects/mi; nothing imports it
// but cmd/minimal.
package bootstrap
