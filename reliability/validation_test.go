package reliability

import "testing"

func TestUnder(t *testing.T) {
	tests := []struct{ prefix, param, want string }{
		{"config", "", "config"},
		{"config", "pattern", "config.pattern"},
		{"items", "[2]", "items[2]"},
		{"items[0]", "weight", "items[0].weight"},
	}
	for _, tt := range tests {
		if got := under(tt.prefix, &ValidationError{Param: tt.param}).Param; got != tt.want {
			t.Errorf("under(%q, %q) = %q, want %q", tt.prefix, tt.param, got, tt.want)
		}
	}
	if under("x", nil) != nil {
		t.Fatal("under(nil) is not nil")
	}
}

func TestTextLenCountsCharacters(t *testing.T) {
	if textLen("héllo") != 5 || textLen("日本") != 2 {
		t.Fatal("textLen counts bytes")
	}
}

func TestValidationErrorMessage(t *testing.T) {
	if got := invalid("items[0].weight", "must be %d or less", 100).Error(); got != "items[0].weight: must be 100 or less" {
		t.Fatalf("Error() = %q", got)
	}
	if got := (&ValidationError{Message: "frozen"}).Error(); got != "frozen" {
		t.Fatalf("Error() = %q", got)
	}
}
