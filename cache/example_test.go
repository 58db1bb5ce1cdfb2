package cache_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/cache"
)

// A Store is the pipeline.Cache of one service and key: answers put under
// it are found again by a later run until they are older than the TTL.
func Example() {
	dir, _ := os.MkdirTemp("", "cache-example")
	defer os.RemoveAll(dir)

	db, err := cache.Open(filepath.Join(dir, "answers.db"), cache.Options{})
	if err != nil {
		fmt.Println(err) // "cache PATH is locked by another addrclean process", or damaged
		return
	}
	defer db.Close()
	ns := cache.LiveNamespace("https://api.example.com", api.Secret("pub_key")) // the key is only hashed
	store, err := db.Store(ns, cache.DefaultTTL)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	key := "1 main street\x00\x01cork\x01\x01ie\x01" // the pipeline's address key
	_ = store.Put(ctx, key, &api.VerifyResponse{Action: api.ActionAccept})
	resp, ok, err := store.Get(ctx, key)
	fmt.Println(resp.Action, ok, err)

	st, _ := db.Stats(context.Background(), time.Hour)
	fmt.Println(st.Entries, "entry")
	// Output:
	// Accept true <nil>
	// 1 entry
}
