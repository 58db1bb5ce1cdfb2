package journal

import "github.com/addrclean/addrclean/api"

// encodeResponse and decodeResponse store answers losslessly (members the
// interface does not name included) with the api package's own codec, the
// one the service writes answers with.
func encodeResponse(r *api.VerifyResponse) ([]byte, error) {
	return api.AppendVerifyResponse(nil, r), nil
}

func decodeResponse(b []byte) (*api.VerifyResponse, error) { return api.DecodeVerifyResponse(b) }
