package api_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/addrclean/addrclean/api"
	"github.com/addrclean/addrclean/service/servicetest"
)

// TestVerifyAnswer holds VerifyAnswer to its promise: the bytes it returns
// are the service's body (trimmed), decode to the answer it returns, and
// are nil when the answer is not the body as sent (a token parameter
// dropped from a link, an escape that could hide the token).
func TestVerifyAnswer(t *testing.T) {
	tests := []struct {
		name string
		body string // "" is the real service's answer
		want string // the answer's JSON wanted; "-" for nil
	}{
		{name: "service", want: ""},
		{name: "members in any order, white space",
			body: " {\"links\":[{\"rel\":\"self\",\"href\":\"https://h/v?a=1\"}],\n\"type\":\"verify\",\"action\":\"Accept\"}\n",
			want: "{\"links\":[{\"rel\":\"self\",\"href\":\"https://h/v?a=1\"}],\n\"type\":\"verify\",\"action\":\"Accept\"}"},
		{name: "a link with a token parameter", body: `{"type":"verify","links":[{"href":"https://h/v?token=x&a=1"}]}`, want: "-"},
		{name: "an escape", body: `{"type":"verif\u0079"}`, want: "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newService(t, 0)
			if tt.body != "" {
				f.Plan = always(servicetest.Fault{Status: 200, Body: tt.body})
			}
			c, _ := serve(t, f)
			resp, answer, err := c.VerifyAnswer(context.Background(), matchedAddress)
			if err != nil {
				t.Fatal(err)
			}
			switch tt.want {
			case "-":
				if answer != nil {
					t.Fatalf("answer %s, want nil", answer)
				}
				return
			case "":
				if answer == nil {
					t.Fatal("no answer bytes for the service's own answer")
				}
			default:
				if string(answer) != tt.want {
					t.Fatalf("answer\n%s\nwant\n%s", answer, tt.want)
				}
			}
			again, err := api.DecodeVerifyResponse(answer)
			if err != nil || !reflect.DeepEqual(again, resp) {
				t.Fatalf("the answer's bytes decode to\n%+v (%v)\nnot\n%+v", again, err, resp)
			}
			plain, err := c.Verify(context.Background(), matchedAddress)
			if err != nil || !reflect.DeepEqual(plain, resp) {
				t.Fatalf("Verify gives\n%+v (%v)\nVerifyAnswer\n%+v", plain, err, resp)
			}
		})
	}
}
