#include <vector>
#include <map>
#include <string>
#include <functional>
#include <memory>
#include <tuple>
#include <unordered_map>
namespace { struct Hidden { int f(int x) const { return x + 1; } }; int anon_fn(std::vector<int> const& v) { return (int)v.size(); } }
namespace outer { namespace inner { template <typename T, int N> struct Box { T v[N]; T get(int i) const { return v[i]; } static Box make(); }; template <typename T, int N> Box<T,N> Box<T,N>::make() { return {}; } } }
template <typename... Ts> int variadic(Ts... ts) { return sizeof...(Ts); }
struct Op { bool operator<(const Op&) const { return false; } Op& operator+=(const Op&) { return *this; } operator bool() const { return true; } int operator()(int a) { return a; } };
template <class F> int apply(F f) { return f(3); }
int (*fp_returner(int))(double) { return nullptr; }
void refs(int&&, const std::string&, std::string*, const char* const*, volatile int*) {}
void arrays(int (&)[4], int (*)[8]) {}
void memptr(int Op::*, int (Op::*)(int)) {}
std::function<void(int)> make_fn() { return [](int) {}; }
__attribute__((noinline)) int use_all() {
  std::vector<int> v{1,2,3}; std::map<std::string, std::vector<double>> m; m["a"].push_back(1.0);
  std::unordered_map<int, std::string> um; um[1] = "x"; auto sp = std::make_shared<std::tuple<int, char, long>>();
  int s = anon_fn(v) + Hidden{}.f(2) + outer::inner::Box<long, 3>::make().get(0) + variadic(1, 'c', 2.0, v);
  s += apply([&](int a) { return a + s; }) + apply([](int a) { return a * 2; });
  auto gl = [](auto x) { return x; }; s += gl(1) + (int)gl(2.0);
  Op o; o += o; s += o(1) + (o < o) + (bool)o; make_fn()(1);
  int a4[4]; int a8[8]; arrays(a4, &a8); memptr(nullptr, &Op::operator());
  std::string str = "x"; refs(1, str, &str, nullptr, nullptr);
  return s + (int)m.size() + (int)um.size() + std::get<0>(*sp);
}
int main() { return use_all() + (fp_returner(1) != nullptr); }
