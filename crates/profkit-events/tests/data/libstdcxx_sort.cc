#include <algorithm>
#include <vector>
#include <cstdio>
#include <cstdlib>
struct E { unsigned k; int i; };
int main(int argc, char** argv) {
  // mode 0: fixed 20 keys; mode 1: random tests printed for comparison
  if (argc == 1) {
    int keys[] = {3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1};
    std::vector<E> v; for (int i = 0; i < 20; i++) v.push_back({(unsigned)keys[i], i});
    std::sort(v.begin(), v.end(), [](const E& a, const E& b){ return a.k > b.k; });
    for (auto& e : v) printf("%d, ", e.i); printf("\n");
    return 0;
  }
  unsigned long long s = 0x1234567;
  for (int t = 0; t < 120; t++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    int n = s % 120; int m = 1 + (s >> 20) % 5;
    std::vector<E> v;
    for (int i = 0; i < n; i++) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; v.push_back({(unsigned)(s % m), i}); }
    printf("%d", n); for (auto& e : v) printf(" %u", e.k); printf(" |");
    std::sort(v.begin(), v.end(), [](const E& a, const E& b){ return a.k > b.k; });
    for (auto& e : v) printf(" %d", e.i); printf("\n");
  }
}
