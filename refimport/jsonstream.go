package refimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/addrclean/addrclean/gazetteer"
	"github.com/addrclean/addrclean/internal/rowlimit"
)

// jsonStream reads the records of a JSON input one at a time, whatever
// its shape: an array of records, an object holding the array under one
// of a few keys ({"type": "FeatureCollection", "features": [...]}, {"result":
// [...]}), or records one after another (JSON lines). Only one record is
// held at a time.
type jsonStream struct {
	dec     *json.Decoder
	in      *input
	inArray bool
	first   map[string]json.RawMessage // a record read while looking for an array
	done    bool
}

// arrayKeys hold the records in a wrapping object.
var arrayKeys = []string{"features", "result", "results", "addresses", "data", "records"}

func newJSONStream(in *input) (*jsonStream, error) {
	dec := json.NewDecoder(in)
	dec.UseNumber()
	s := &jsonStream{dec: dec, in: in}
	tok, err := s.token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('['):
		s.inArray = true
		return s, nil
	case json.Delim('{'):
	default:
		return nil, fmt.Errorf("%w: JSON input starts with %v", ErrFormat, tok)
	}
	obj := make(map[string]json.RawMessage)
	for dec.More() {
		kt, err := s.token()
		if err != nil {
			return nil, err
		}
		key, _ := kt.(string)
		if slices.Contains(arrayKeys, key) {
			// Look at the value: an array is the records.
			vt, err := s.token()
			if err != nil {
				return nil, err
			}
			if vt == json.Delim('[') {
				s.inArray = true
				return s, nil
			}
			// Not an array: keep a scalar; nested values are not wanted.
			if vt == json.Delim('{') {
				return nil, fmt.Errorf("%w: %q is not an array", ErrFormat, key)
			}
			b, _ := json.Marshal(vt)
			obj[key] = b
			continue
		}
		var v json.RawMessage
		if err := s.decode(&v); err != nil {
			return nil, err
		}
		obj[key] = v
	}
	if _, err := s.token(); err != nil { // the closing brace
		return nil, err
	}
	s.first = obj
	return s, nil
}

// next decodes the next record into v; false at the end.
func (s *jsonStream) next(v any) (bool, error) {
	if s.first != nil {
		b, err := json.Marshal(s.first)
		s.first = nil
		if err != nil {
			return false, fmt.Errorf("refimport: %w", err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			return false, fmt.Errorf("%w: %v", ErrFormat, err)
		}
		return true, nil
	}
	if s.done {
		return false, nil
	}
	if !s.dec.More() {
		s.done = true
		if s.inArray {
			if _, err := s.token(); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	if err := s.decode(v); err != nil {
		return false, err
	}
	return true, nil
}

// token reads the next token, as json.Decoder.Token, and moves the row
// limit past it; its error says where (jsonErr).
func (s *jsonStream) token() (json.Token, error) {
	t, err := s.dec.Token()
	if err != nil {
		return nil, jsonErr(s.dec, err)
	}
	s.in.mark(s.dec.InputOffset())
	return t, nil
}

// decode decodes the next value into v, as json.Decoder.Decode, and moves
// the row limit past it; a value over the limit stops the conversion.
func (s *jsonStream) decode(v any) error {
	from := s.in.end
	if err := s.dec.Decode(v); err != nil {
		return jsonErr(s.dec, err)
	}
	if n := s.in.mark(s.dec.InputOffset()); n > gazetteer.MaxRowBytes {
		return &SourceError{Err: fmt.Errorf("JSON at byte %d: %w", from-s.in.bom, errLongRecord)}
	}
	return nil
}

// jsonErr says where in the input a JSON error is.
func jsonErr(dec *json.Decoder, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if errors.Is(err, rowlimit.ErrTooLong) {
		return &SourceError{Err: fmt.Errorf("JSON at byte %d: %w", dec.InputOffset(), errLongRecord)}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%w: at byte %d: %v", ErrFormat, dec.InputOffset(), err)
	}
	return &SourceError{Err: fmt.Errorf("JSON at byte %d: %w", dec.InputOffset(), err)}
}
