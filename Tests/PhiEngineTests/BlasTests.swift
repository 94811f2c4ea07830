import Testing

@testable import PhiEngine

@Test("OpenBLAS sgemm with transposed B matches a naive triple loop")
func sgemmMatchesNaive() {
    let (m, n, k) = (3, 5, 7)
    let a = (0..<m * k).map { Float(($0 * 7) % 11) - 5 }
    let b = (0..<n * k).map { Float(($0 * 5) % 13) - 6 }
    var c = [Float](repeating: 0, count: m * n)
    Blas.matmulTransposedB(a, b, &c, m: m, n: n, k: k)
    for i in 0..<m {
        for j in 0..<n {
            var s: Float = 0
            for p in 0..<k { s += a[i * k + p] * b[j * k + p] }
            #expect(c[i * n + j] == s)
        }
    }
}
