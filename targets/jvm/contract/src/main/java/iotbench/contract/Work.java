package iotbench.contract;

/** The deterministic work of the contract (docs/contract.md, "The deterministic work"). */
public final class Work {
    private Work() {
    }

    public static final int SEED = (int) 2463534242L;

    /** xorshift32, 32-bit unsigned arithmetic, seeded with 2463534242 at the start of each request. */
    public static final class XorShift32 {
        private int x = SEED;

        public double next() {
            int v = x;
            v ^= v << 13;
            v ^= v >>> 17;
            v ^= v << 5;
            x = v;
            return (v & 0xFFFFFFFFL) / 4294967296.0;
        }
    }

    public static double monteCarloPi(int n) {
        XorShift32 rng = new XorShift32();
        long inside = 0;
        for (int i = 0; i < n; i++) {
            double a = rng.next();
            double b = rng.next();
            if (a * a + b * b <= 1.0) {
                inside++;
            }
        }
        return 4.0 * inside / n;
    }

    /** 100x100 doubles, A[i][j] = (i*j) % 7, B[i][j] = (i+j) % 5, full naive product, trace of C. */
    public static double matrixTrace() {
        final int n = 100;
        double[][] a = new double[n][n];
        double[][] b = new double[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                a[i][j] = (i * j) % 7;
                b[i][j] = (i + j) % 5;
            }
        }
        double[][] c = new double[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                double sum = 0;
                for (int k = 0; k < n; k++) {
                    sum += a[i][k] * b[k][j];
                }
                c[i][j] = sum;
            }
        }
        double trace = 0;
        for (int i = 0; i < n; i++) {
            trace += c[i][i];
        }
        return trace;
    }

    /** Primes below {@code limit} by trial division: 2, then odd divisors d while d*d <= v. */
    public static int countPrimes(int limit) {
        int count = 0;
        for (int v = 2; v < limit; v++) {
            if (isPrime(v)) {
                count++;
            }
        }
        return count;
    }

    private static boolean isPrime(int v) {
        if (v < 2) {
            return false;
        }
        if (v % 2 == 0) {
            return v == 2;
        }
        for (int d = 3; d * d <= v; d += 2) {
            if (v % d == 0) {
                return false;
            }
        }
        return true;
    }

    public static long fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }
}
