package sandbox

import (
	"reflect"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/sandbox/helper"
)

// The setup's spec (wire) carries every field of the helper's Spec, each
// from Spec's field of the same name and type: a field added to both but
// not copied would reach the helper empty.
func TestSpecWire(t *testing.T) {
	var spec Spec
	sv := reflect.ValueOf(&spec).Elem()
	wt := reflect.TypeOf(helper.Spec{})
	for i := range wt.NumField() {
		f := wt.Field(i)
		sf, ok := sv.Type().FieldByName(f.Name)
		if !ok || sf.Type != f.Type {
			t.Fatalf("helper.Spec.%s (%v) has no field of its type in Spec", f.Name, f.Type)
		}
		v := sv.FieldByIndex(sf.Index)
		switch v.Kind() {
		case reflect.Bool:
			v.SetBool(true)
		case reflect.String:
			v.SetString(f.Name)
		case reflect.Int, reflect.Int64:
			v.SetInt(int64(i + 1))
		case reflect.Slice:
			s := reflect.MakeSlice(v.Type(), 1, 1)
			switch e := s.Index(0); e.Kind() {
			case reflect.String:
				e.SetString(f.Name)
			case reflect.Int:
				e.SetInt(int64(i + 1))
			}
			v.Set(s)
		case reflect.Struct:
			v.Set(reflect.ValueOf(Limits{Procs: 1, Memory: 2, FileSize: 3, CPUTime: time.Second}))
		default:
			t.Fatalf("Spec.%s: a %v this test cannot fill", f.Name, v.Kind())
		}
	}
	w := reflect.ValueOf(spec.wire()).Elem()
	for i := range wt.NumField() {
		name := wt.Field(i).Name
		if got, want := w.Field(i).Interface(), sv.FieldByName(name).Interface(); !reflect.DeepEqual(got, want) {
			t.Errorf("wire: %s is %v, want %v", name, got, want)
		}
	}
}
