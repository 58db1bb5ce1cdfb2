package service

import (
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/addrclean/addrclean/api"
)

// The verify answer and the error envelope are written by hand instead of
// through encoding/json's reflection: they are encoded once per row of a
// run. The appenders below produce exactly the bytes of
//
//	enc := json.NewEncoder(buf)
//	enc.SetEscapeHTML(false)
//	enc.Encode((*wireVerify)(resp)) // or errorBody
//
// trailing newline included; TestAnswerEncodingMatchesJSON and
// TestErrorEncodingMatchesJSON hold them to it, api's tests hold
// api.AppendVerifyResponse. What they do not handle (NaN or infinite
// coordinates, data.Extra members) goes through writeJSON.

// encPool holds the buffers of hand-encoded answers.
var encPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// Header values shared by every JSON answer. net/http only reads them.
var (
	hdrJSON    = []string{"application/json; charset=utf-8"}
	hdrNoStore = []string{"no-store"}
)

// writeVerify writes a verify answer with status 200.
func (s *Service) writeVerify(w http.ResponseWriter, resp *api.VerifyResponse) int {
	bp := encPool.Get().(*[]byte)
	b, ok := appendVerify((*bp)[:0], resp)
	if !ok {
		encPool.Put(bp)
		// A copy goes to encoding/json, so that resp itself does not
		// escape: the answer of every row stays off the heap.
		wire := wireVerify(*resp)
		return s.writeJSON(w, http.StatusOK, &wire)
	}
	writeBody(w, http.StatusOK, b)
	if cap(b) <= 1<<20 {
		*bp = b
		encPool.Put(bp)
	}
	return http.StatusOK
}

// contentLengths are the Content-Length values of bodies shorter than
// maxSharedLength (every verify answer seen), shared as hdrJSON is: two
// allocations per answer less.
var contentLengths = sync.OnceValue(func() [][]string {
	v := make([][]string, maxSharedLength)
	for n := range v {
		v[n] = []string{strconv.Itoa(n)}
	}
	return v
})

const maxSharedLength = 4 << 10

// writeBody writes an encoded JSON answer with one Write.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = hdrJSON
	h["Cache-Control"] = hdrNoStore
	if len(b) < maxSharedLength {
		h["Content-Length"] = contentLengths()[len(b)]
	} else {
		h["Content-Length"] = []string{strconv.Itoa(len(b))}
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// appendVerify appends the JSON of v as the service sends it:
// api.AppendVerifyResponse, which writes encoding/json's bytes for an
// answer without Extra members and with finite coordinates, and the
// encoder's trailing newline. ok is false when v holds something only
// encoding/json writes the service's way (data.Extra members, NaN or
// infinite coordinates); b is then unchanged.
func appendVerify(b []byte, v *api.VerifyResponse) ([]byte, bool) {
	if len(v.Data.Extra) > 0 {
		return b, false
	}
	if l := v.Data.Location; l != nil && !(finite(l.Latitude) && finite(l.Longitude)) {
		return b, false
	}
	if len(v.Extra) > 0 {
		// wireVerify has no MarshalJSON: the answer's own Extra is not sent.
		c := *v
		c.Extra = nil
		v = &c
	}
	b = api.AppendVerifyResponse(b, v)
	return append(b, '\n'), true
}

func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

// appendError appends the JSON of the error envelope e.
func appendError(b []byte, e *errorBody) []byte {
	b = append(b, `{"type":`...)
	b = api.AppendJSONString(b, e.Type, false)
	b = append(b, `,"form":`...)
	b = appendForm(b, &e.Form)
	return append(b, "}\n"...)
}

func appendForm(b []byte, f *api.Form) []byte {
	b = append(b, `{"language":`...)
	b = api.AppendJSONString(b, f.Language, false)
	b = append(b, `,"message":{"id":`...)
	b = strconv.AppendInt(b, int64(f.Message.ID), 10)
	b = append(b, `,"severity":`...)
	b = api.AppendJSONString(b, f.Message.Severity, false)
	b = append(b, `,"value":`...)
	b = api.AppendJSONString(b, f.Message.Value, false)
	return append(b, "}}"...)
}
