package attr

import "testing"

func BenchmarkWork(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Work(i)
	}
}
