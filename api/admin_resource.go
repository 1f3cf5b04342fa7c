package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// crud is the CRUD of one admin resource kept in the store, written
// once. Every route resolves what is above the item (parent: an org, a
// project); the item routes resolve what the path names (at: the item
// itself, or only its key when a write must read its body first); a
// create decodes its body strictly into C, an update into U; the store
// calls are the resource's;
// the answers are the item as stored (out) — 201 for a create, 200
// otherwise —, a listing {"data":[…]}, 204 for a delete, and the error
// envelope for the first refusal.
//
// P is the parent, K what an item path resolves to, T the stored item, C
// and U the bodies of a create and of an update. A nil create, update or
// remove leaves its route out.
type crud[P, K, T, C, U any] struct {
	a      *admin
	parent func(*http.Request) (P, error)
	list   func(*http.Request, P) ([]T, error)
	at     func(*http.Request, P) (K, error)
	get    func(*http.Request, P, K) (T, error)
	create func(*http.Request, P, *C) (T, error)
	update func(*http.Request, P, K, *U) (T, error)
	remove func(*http.Request, P, K) error
	out    func(P, T) any
}

// mount serves the resource: list and create on coll; get, update (with
// updateMethod, PATCH or PUT) and delete on item.
func (x crud[P, K, T, C, U]) mount(r chi.Router, coll, item, updateMethod string) {
	r.Get(coll, x.serveList)
	if x.create != nil {
		r.Post(coll, x.serveCreate)
	}
	r.Get(item, x.serveGet)
	if x.update != nil {
		r.Method(updateMethod, item, http.HandlerFunc(x.serveUpdate))
	}
	if x.remove != nil {
		r.Delete(item, x.serveDelete)
	}
}

func (x crud[P, K, T, C, U]) serveList(w http.ResponseWriter, r *http.Request) {
	p, err := x.parent(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	items, err := x.list(r, p)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]any, len(items))
	for i, t := range items {
		out[i] = x.out(p, t)
	}
	writeList(w, out)
}

func (x crud[P, K, T, C, U]) serveCreate(w http.ResponseWriter, r *http.Request) {
	var t T
	p, err := x.parent(r)
	if err == nil {
		b := new(C)
		if err = x.a.decodeStrict(w, r, b); err == nil {
			t, err = x.create(r, p, b)
		}
	}
	x.answer(w, r, http.StatusCreated, p, t, err)
}

func (x crud[P, K, T, C, U]) serveGet(w http.ResponseWriter, r *http.Request) {
	var t T
	p, k, err := x.item(r)
	if err == nil {
		t, err = x.get(r, p, k)
	}
	x.answer(w, r, http.StatusOK, p, t, err)
}

func (x crud[P, K, T, C, U]) serveUpdate(w http.ResponseWriter, r *http.Request) {
	var t T
	p, k, err := x.item(r)
	if err == nil {
		b := new(U)
		if err = x.a.decodeStrict(w, r, b); err == nil {
			t, err = x.update(r, p, k, b)
		}
	}
	x.answer(w, r, http.StatusOK, p, t, err)
}

func (x crud[P, K, T, C, U]) serveDelete(w http.ResponseWriter, r *http.Request) {
	p, k, err := x.item(r)
	if err == nil {
		err = x.remove(r, p, k)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	noContent(w)
}

// answer writes the item as stored with status, or the refusal err.
func (x crud[P, K, T, C, U]) answer(w http.ResponseWriter, r *http.Request, status int, p P, t T, err error) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, status, x.out(p, t))
}

// item resolves the parent and what an item path names.
func (x crud[P, K, T, C, U]) item(r *http.Request) (P, K, error) {
	var k K
	p, err := x.parent(r)
	if err != nil {
		return p, k, err
	}
	k, err = x.at(r, p)
	return p, k, err
}

// itself is the get of a resource whose at resolves the item itself.
func itself[P, T any](_ *http.Request, _ P, t T) (T, error) { return t, nil }
