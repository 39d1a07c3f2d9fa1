package pytool

import (
	"context"
	"os"
	"testing"
)

func TestZZDebug(t *testing.T) {
	code, _ := os.ReadFile(os.Getenv("ZZ_CODE"))
	test, _ := os.ReadFile(os.Getenv("ZZ_TEST"))
	m, err := Check(context.Background(), python, os.Getenv("ZZ_NAME"), code, test)
	t.Logf("meta=%+v\nerr=\n%v", m, err)
}
