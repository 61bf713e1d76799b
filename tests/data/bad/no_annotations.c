void f(float *x) { x[0] = 1; }
