package translate

import "testing"

func TestSplitDataURL(t *testing.T) {
	for _, c := range []struct {
		in, mediaType, data string
		ok                  bool
	}{
		{"data:image/png;base64,iVBORw0KGgo=", "image/png", "iVBORw0KGgo=", true},
		{"DATA:image/jpeg;base64,/9j/", "image/jpeg", "/9j/", true},
		{"data:image/svg+xml;charset=utf-8,%3Csvg%2F%3E", "image/svg+xml", "PHN2Zy8+", true},
		{"data:;base64,QQ==", "text/plain", "QQ==", true},
		{"data:image/png;base64", "", "", false},
		{"data:image/png,%zz", "", "", false},
		{"https://example.com/a.png", "", "", false},
	} {
		mt, d, ok := splitDataURL(c.in)
		if mt != c.mediaType || d != c.data || ok != c.ok {
			t.Errorf("%s -> %q %q %v", c.in, mt, d, ok)
		}
	}
}

func TestAppendImageURL(t *testing.T) {
	for _, c := range []struct {
		p    convPart
		want string
	}{
		{convPart{url: "https://x.test/a.png"}, `"https://x.test/a.png"`},
		{convPart{mediaType: "image/gif", data: "R0lGOD"}, `"data:image/gif;base64,R0lGOD"`},
		{convPart{mediaType: `a"b`, data: "x"}, `"data:a\"b;base64,x"`},
	} {
		if got := string(appendImageURL(nil, &c.p)); got != c.want {
			t.Errorf("%+v -> %s, want %s", c.p, got, c.want)
		}
	}
}

func TestAppendAnthropicImageSource(t *testing.T) {
	for _, c := range []struct {
		p    convPart
		want string
	}{
		{convPart{url: "https://x.test/a.png"}, `{"type":"url","url":"https://x.test/a.png"}`},
		{convPart{url: "data:image/webp;base64,UklG"}, `{"type":"base64","media_type":"image/webp","data":"UklG"}`},
		{convPart{mediaType: "image/png", data: "iVBO"}, `{"type":"base64","media_type":"image/png","data":"iVBO"}`},
	} {
		if got := string(appendAnthropicImageSource(nil, &c.p)); got != c.want {
			t.Errorf("%+v -> %s, want %s", c.p, got, c.want)
		}
	}
}

func TestAppendJSONStringBody(t *testing.T) {
	got := string(appendJSONStringBody([]byte(`"x`), "a\"\n"))
	if got != `"xa\"\n` {
		t.Errorf("got %s", got)
	}
}
