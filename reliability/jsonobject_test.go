package reliability

import "testing"

func TestParseObject(t *testing.T) {
	for _, raw := range []string{``, `  `, `[]`, `"x"`, `1`, `null`, `{`, `{"a":}`} {
		if _, verr := parseObject([]byte(raw)); verr == nil {
			t.Errorf("parseObject(%q) accepted", raw)
		}
	}
	obj, verr := parseObject([]byte(` {"a":1} `))
	if verr != nil || !obj.has("a") {
		t.Fatalf("parseObject = %+v, %v", obj, verr)
	}
}

func TestJSONObjectFields(t *testing.T) {
	obj, _ := parseObject([]byte(`{"s":"héllo","n":0.5,"i":3,"f":1.5,"b":true,"z":null,"arr":["x",1],"o":{"k":1},"e":""}`))
	if verr := obj.allow("s", "n"); verr == nil || verr.Param != "arr" || verr.Code != CodeUnknownParameter {
		t.Fatalf("allow = %v", verr)
	}
	if v, ok, verr := obj.text("s", 1, 5); v != "héllo" || !ok || verr != nil {
		t.Fatalf("text = %q, %v, %v", v, ok, verr)
	}
	if _, _, verr := obj.text("s", 1, 4); verr == nil || verr.Param != "s" {
		t.Fatalf("over-long text = %v", verr)
	}
	if _, _, verr := obj.text("e", 1, 4); verr == nil {
		t.Fatal("empty text accepted with minimum 1")
	}
	if _, ok, verr := obj.text("missing", 1, 4); ok || verr != nil {
		t.Fatal("absent text reported present")
	}
	if _, _, verr := obj.str("z"); verr == nil {
		t.Fatal("null read as a string")
	}
	if !obj.isNull("z") || obj.present("z") || !obj.has("z") || obj.required("z") == nil {
		t.Fatal("null handling")
	}
	if v, _, verr := obj.num("n", 0, 1); v != 0.5 || verr != nil {
		t.Fatalf("num = %v, %v", v, verr)
	}
	if _, _, verr := obj.num("i", 0, 1); verr == nil {
		t.Fatal("out of range number accepted")
	}
	if _, _, verr := obj.num("s", 0, 1); verr == nil {
		t.Fatal("string read as a number")
	}
	if v, _, verr := obj.integer("i", 2, 5); v != 3 || verr != nil {
		t.Fatalf("integer = %v, %v", v, verr)
	}
	if _, _, verr := obj.integer("f", 0, 5); verr == nil {
		t.Fatal("fraction read as an integer")
	}
	if v, _, verr := obj.boolean("b"); !v || verr != nil {
		t.Fatal("boolean")
	}
	if _, _, verr := obj.boolean("n"); verr == nil {
		t.Fatal("number read as a boolean")
	}
	arr, _, verr := obj.array("arr")
	if len(arr) != 2 || verr != nil {
		t.Fatalf("array = %v, %v", arr, verr)
	}
	if _, verr := stringItem("arr[1]", arr[1]); verr == nil || verr.Param != "arr[1]" {
		t.Fatalf("stringItem = %v", verr)
	}
	if _, _, verr := obj.array("o"); verr == nil {
		t.Fatal("object read as an array")
	}
	if o, _, verr := obj.object("o"); verr != nil || !o.has("k") {
		t.Fatal("object")
	}
}

func FuzzParseObject(f *testing.F) {
	f.Add(`{"a":1,"b":[1,2],"c":null}`)
	f.Add(`{"a":"x","a":"y"}`)
	f.Add(`[{}]`)
	f.Fuzz(func(t *testing.T, raw string) {
		obj, verr := parseObject([]byte(raw))
		if verr != nil {
			return
		}
		for name := range obj.fields {
			_, _, _ = obj.text(name, 0, 10)
			_, _, _ = obj.num(name, 0, 1)
			_, _, _ = obj.integer(name, 0, 10)
			_, _, _ = obj.array(name)
			_, _, _ = obj.object(name)
		}
		_ = obj.allow()
	})
}
