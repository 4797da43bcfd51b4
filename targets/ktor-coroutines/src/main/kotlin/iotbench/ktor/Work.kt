package iotbench.ktor

/** The deterministic work of the contract (docs/contract.md, "The deterministic work"). Plain CPU code. */
object Work {
    private const val SEED: Int = 2463534242L.toInt()

    /** xorshift32, 32-bit unsigned arithmetic, seeded with 2463534242 at the start of each request. */
    class XorShift32 {
        private var x: Int = SEED

        fun next(): Double {
            var v = x
            v = v xor (v shl 13)
            v = v xor (v ushr 17)
            v = v xor (v shl 5)
            x = v
            return (v.toLong() and 0xFFFFFFFFL) / 4294967296.0
        }
    }

    fun monteCarloPi(n: Int): Double {
        val rng = XorShift32()
        var inside = 0L
        for (i in 0 until n) {
            val a = rng.next()
            val b = rng.next()
            if (a * a + b * b <= 1.0) inside++
        }
        return 4.0 * inside / n
    }

    fun matrixTrace(): Double {
        val n = 100
        val a = Array(n) { i -> DoubleArray(n) { j -> ((i * j) % 7).toDouble() } }
        val b = Array(n) { i -> DoubleArray(n) { j -> ((i + j) % 5).toDouble() } }
        val c = Array(n) { DoubleArray(n) }
        for (i in 0 until n) {
            for (j in 0 until n) {
                var sum = 0.0
                for (k in 0 until n) {
                    sum += a[i][k] * b[k][j]
                }
                c[i][j] = sum
            }
        }
        var trace = 0.0
        for (i in 0 until n) trace += c[i][i]
        return trace
    }

    fun countPrimes(limit: Int): Int {
        var count = 0
        for (v in 2 until limit) {
            if (isPrime(v)) count++
        }
        return count
    }

    private fun isPrime(v: Int): Boolean {
        if (v < 2) return false
        if (v % 2 == 0) return v == 2
        var d = 3
        while (d * d <= v) {
            if (v % d == 0) return false
            d += 2
        }
        return true
    }

    fun fib(n: Int): Long = if (n < 2) n.toLong() else fib(n - 1) + fib(n - 2)
}
