use std::collections::HashMap;
pub mod shapes { pub trait Area { fn area(&self) -> f64; } pub struct Sq<T>(pub T);
  impl Area for Sq<f64> { fn area(&self) -> f64 { self.0 * self.0 } }
  impl<T: Copy + Into<f64>> Sq<T> { pub fn side(&self) -> f64 { self.0.into() } } }
pub fn generic<T: std::fmt::Debug, const N: usize>(x: [T; N]) -> String { format!("{:?}", x) }
fn main() {
  use shapes::Area;
  let mut h: HashMap<String, Vec<u32>> = HashMap::new(); h.entry("a".into()).or_default().push(1);
  let c = |x: u32| x + 1; let v: Vec<u32> = (0..10).map(c).collect();
  let b: Box<dyn Area> = Box::new(shapes::Sq(2.0f64));
  println!("{} {} {} {} {}", b.area(), shapes::Sq(3u8).side(), generic([1u8, 2, 3]), v.len(), h.len());
  let r = std::panic::catch_unwind(|| { let e: Result<u8, &str> = Err("x"); e.unwrap_or(0) }); println!("{:?}", r.is_ok());
}
