/* A branchy kernel whose winner depends on its input data: the bucket of
 * each value among sorted edges, by binary search (SEARCH=0: about log2(E)
 * steps for every value) or by a linear scan from the first edge (SEARCH=1:
 * as many steps as edges below the value). On invented values, uniform over
 * the edges, the scan takes E/2 steps and binary search wins; on real data
 * crowded at the low end (tests/e2e/real_data.sh writes such a file) the
 * scan stops after a few steps and wins. */
// @autotune(SEARCH in {0, 1})
// @kernel bucketize(edges: tensor<f32>[E] = iota, q: tensor<f32>[N] = random(0, E), bucket: out tensor<i32>[N], n: i32 = N, e: i32 = E)
// @dims(N = 1 << 14, E = 8192)
void bucketize(const float *edges, const float *q, int *bucket, int n, int e) {
  for (int i = 0; i < n; i++) {
    int lo = 0;
    if (SEARCH == 1) {
      while (lo < e && edges[lo] <= q[i]) lo++;
    } else {
      int hi = e;
      while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (edges[mid] <= q[i]) lo = mid + 1;
        else hi = mid;
      }
    }
    bucket[i] = lo;
  }
}
