//! Warp's value types as the code generator sees them, and their C++ spelling.

use crate::text::Put;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    Float32,
    Float64,
    /// `wp.bfloat16` (brain floating point).
    BFloat16,
}

impl Scalar {
    pub const ALL: [Scalar; 13] = [
        Scalar::Bool,
        Scalar::Int8,
        Scalar::Int16,
        Scalar::Int32,
        Scalar::Int64,
        Scalar::UInt8,
        Scalar::UInt16,
        Scalar::UInt32,
        Scalar::UInt64,
        Scalar::Float16,
        Scalar::Float32,
        Scalar::Float64,
        Scalar::BFloat16,
    ];

    /// Warp's name for the type (`wp.float32`), which is also the C++ name in `wp::`.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Int8 => "int8",
            Scalar::Int16 => "int16",
            Scalar::Int32 => "int32",
            Scalar::Int64 => "int64",
            Scalar::UInt8 => "uint8",
            Scalar::UInt16 => "uint16",
            Scalar::UInt32 => "uint32",
            Scalar::UInt64 => "uint64",
            Scalar::Float16 => "float16",
            Scalar::Float32 => "float32",
            Scalar::Float64 => "float64",
            Scalar::BFloat16 => "bfloat16",
        }
    }

    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn ctype(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Int8 => "wp::int8",
            Scalar::Int16 => "wp::int16",
            Scalar::Int32 => "wp::int32",
            Scalar::Int64 => "wp::int64",
            Scalar::UInt8 => "wp::uint8",
            Scalar::UInt16 => "wp::uint16",
            Scalar::UInt32 => "wp::uint32",
            Scalar::UInt64 => "wp::uint64",
            Scalar::Float16 => "wp::float16",
            Scalar::Float32 => "wp::float32",
            Scalar::Float64 => "wp::float64",
            Scalar::BFloat16 => "wp::bfloat16",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            Scalar::Float16 | Scalar::Float32 | Scalar::Float64 | Scalar::BFloat16
        )
    }

    pub fn is_int(self) -> bool {
        !self.is_float() && self != Scalar::Bool
    }

    /// The least and greatest value of an integer type (0 and 1 for bool; a
    /// float type's are its integers' limits, not asked for).
    pub fn int_range(self) -> (i128, i128) {
        match self {
            Scalar::Int8 => (i8::MIN.into(), i8::MAX.into()),
            Scalar::Int16 => (i16::MIN.into(), i16::MAX.into()),
            Scalar::Int32 => (i32::MIN.into(), i32::MAX.into()),
            Scalar::Int64 => (i64::MIN.into(), i64::MAX.into()),
            Scalar::UInt8 => (0, u8::MAX.into()),
            Scalar::UInt16 => (0, u16::MAX.into()),
            Scalar::UInt32 => (0, u32::MAX.into()),
            Scalar::UInt64 => (0, u64::MAX.into()),
            Scalar::Bool => (0, 1),
            _ => (i128::MIN, i128::MAX),
        }
    }
}

/// A value type that can live in a variable or an array element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    Scalar(Scalar),
    /// `wp.vecN`: length, component type.
    Vector(u8, Scalar),
    /// `wp.matNM`: rows, columns, component type.
    Matrix(u8, u8, Scalar),
    Quat(Scalar),
    /// `wp.transform`: translation and rotation, 7 components.
    Transform(Scalar),
    /// A `@wp.struct`, by its entry in the struct table.
    Struct(StructId),
    /// `wp.Texture1D` ... `Texture3D` (as a struct field or an array element):
    /// the value of a `Type::Query(Query::Texture(n))`.
    Texture(u8),
}

impl Value {
    pub fn ctype(self) -> String {
        let mut out = String::with_capacity(32);
        self.push_ctype(&mut out);
        out
    }

    /// The C++ type of a scalar, or of a float32 vector or matrix (the types
    /// of nearly every variable), spelled whole: one piece to copy instead of
    /// five and a number. None for the other types.
    pub fn spelled_ctype(self) -> Option<&'static str> {
        Some(match self {
            Value::Scalar(s) => s.ctype(),
            Value::Vector(2, Scalar::Float32) => "wp::vec_t<2, wp::float32>",
            Value::Vector(3, Scalar::Float32) => "wp::vec_t<3, wp::float32>",
            Value::Vector(4, Scalar::Float32) => "wp::vec_t<4, wp::float32>",
            Value::Matrix(2, 2, Scalar::Float32) => "wp::mat_t<2, 2, wp::float32>",
            Value::Matrix(3, 3, Scalar::Float32) => "wp::mat_t<3, 3, wp::float32>",
            Value::Matrix(4, 4, Scalar::Float32) => "wp::mat_t<4, 4, wp::float32>",
            _ => return None,
        })
    }

    /// Appends the C++ type: code generation spells types on most lines, so
    /// they are written in place rather than formatted into strings of their own.
    pub fn push_ctype(self, out: &mut String) {
        if let Some(spelled) = self.spelled_ctype() {
            return out.put(spelled);
        }
        let mut n = itoa::Buffer::new();
        match self {
            Value::Scalar(s) => out.put(s.ctype()),
            Value::Vector(len, s) => {
                out.put_all(&["wp::vec_t<", n.format(len), ", ", s.ctype(), ">"]);
            }
            Value::Matrix(r, c, s) => {
                out.put_all(&["wp::mat_t<", n.format(r), ", "]);
                out.put_all(&[n.format(c), ", ", s.ctype(), ">"]);
            }
            Value::Quat(s) => out.put_all(&["wp::quat_t<", s.ctype(), ">"]),
            Value::Transform(s) => out.put_all(&["wp::transform_t<", s.ctype(), ">"]),
            Value::Struct(id) => out.put(&id.def().native),
            Value::Texture(n) => out.put_all(&["wp::", Query::Texture(n).native()]),
        }
    }

    /// The component (scalar) type; a struct has none (bool, not numeric, is answered).
    pub fn dtype(self) -> Scalar {
        match self {
            Value::Scalar(s)
            | Value::Vector(_, s)
            | Value::Matrix(_, _, s)
            | Value::Quat(s)
            | Value::Transform(s) => s,
            Value::Struct(_) | Value::Texture(_) => Scalar::Bool,
        }
    }

    pub fn to_type(self) -> Type {
        match self {
            Value::Scalar(s) => Type::Scalar(s),
            Value::Vector(n, s) => Type::Vector(n, s),
            Value::Matrix(r, c, s) => Type::Matrix(r, c, s),
            Value::Quat(s) => Type::Quat(s),
            Value::Transform(s) => Type::Transform(s),
            Value::Struct(id) => Type::Struct(id),
            Value::Texture(n) => Type::Query(Query::Texture(n)),
        }
    }

    /// warp's `get_type_code` of the type (struct hashes are made of these).
    pub fn type_code(self) -> String {
        let scalar = |s: Scalar| match s {
            Scalar::Bool => "b",
            Scalar::Int8 => "i1",
            Scalar::Int16 => "i2",
            Scalar::Int32 => "i4",
            Scalar::Int64 => "i8",
            Scalar::UInt8 => "u1",
            Scalar::UInt16 => "u2",
            Scalar::UInt32 => "u4",
            Scalar::UInt64 => "u8",
            Scalar::Float16 => "f2",
            Scalar::BFloat16 => "bf2",
            Scalar::Float32 => "f4",
            Scalar::Float64 => "f8",
        };
        match self {
            Value::Scalar(s) => scalar(s).to_string(),
            Value::Vector(n, s) => format!("v{n}{}", scalar(s)),
            Value::Matrix(r, c, s) => format!("m{r}{c}{}", scalar(s)),
            Value::Quat(s) => format!("q{}", scalar(s)),
            Value::Transform(s) => format!("t{}", scalar(s)),
            Value::Struct(id) => id.def().native.clone(),
            Value::Texture(n) => format!("t{n}"),
        }
    }
}

/// Index of a `@wp.struct` in the process-wide struct table. Structs are
/// interned by their native name (which hashes the name and every field's
/// type), so one id stands for one C++ definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StructId(u32);

/// A `@wp.struct` as the code generator sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct StructDef {
    /// warp's key: the class's qualified name, sanitized.
    pub key: String,
    /// `key_` + the first 8 hex digits of the struct's hash.
    pub native: String,
    /// SHA-256 of the key and field types (nested structs hash into their parents).
    pub hash: [u8; 32],
    pub fields: Vec<(String, Type)>,
}

impl StructDef {
    /// A struct named `key` with `fields`, its hash and native name computed as warp does.
    pub fn new(key: &str, fields: Vec<(String, Type)>) -> StructDef {
        let mut data = key.as_bytes().to_vec();
        for (name, ty) in &fields {
            data.extend_from_slice(name.as_bytes());
            data.push(b':');
            data.extend_from_slice(ty.type_code().as_bytes());
            if let Type::Struct(id) = ty {
                data.extend_from_slice(&id.def().hash);
            }
        }
        let hash = super::sha256::digest(&data);
        let mut native = String::with_capacity(key.len() + 9);
        native.put_all(&[key, "_"]);
        for b in &hash[..4] {
            native.put(&format!("{b:02x}"));
        }
        StructDef {
            key: key.to_string(),
            native,
            hash,
            fields,
        }
    }

    pub fn field(&self, name: &str) -> Option<(usize, Type)> {
        self.fields
            .iter()
            .position(|(n, _)| n == name)
            .map(|i| (i, self.fields[i].1))
    }
}

type StructTable = (
    Vec<&'static StructDef>,
    std::collections::HashMap<String, u32>,
);

static STRUCTS: std::sync::LazyLock<std::sync::RwLock<StructTable>> =
    std::sync::LazyLock::new(Default::default);

impl StructId {
    /// The id of `def`, added to the table if no struct of its native name is there.
    pub fn intern(def: StructDef) -> StructId {
        if let Some(&id) = STRUCTS.read().expect("struct table").1.get(&def.native) {
            return StructId(id);
        }
        let mut table = STRUCTS.write().expect("struct table");
        if let Some(&id) = table.1.get(&def.native) {
            return StructId(id);
        }
        let id = table.0.len() as u32;
        table.1.insert(def.native.clone(), id);
        table.0.push(Box::leak(Box::new(def)));
        StructId(id)
    }

    pub fn def(self) -> &'static StructDef {
        STRUCTS.read().expect("struct table").0[self.0 as usize]
    }

    /// The struct's position in the table.
    pub fn index(self) -> u32 {
        self.0
    }
}

fn type_suffix(s: Scalar) -> &'static str {
    match s {
        Scalar::Float16 => "h",
        Scalar::Float32 => "f",
        Scalar::Float64 => "d",
        Scalar::Int16 => "s",
        Scalar::Int32 => "i",
        Scalar::Int64 => "l",
        Scalar::Int8 => "b",
        Scalar::UInt8 => "ub",
        Scalar::UInt16 => "us",
        Scalar::UInt32 => "ui",
        Scalar::UInt64 => "ul",
        Scalar::Bool => "bool",
        Scalar::BFloat16 => "bf",
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Scalar(s) => f.write_str(s.name()),
            Value::Vector(n, s) => write!(f, "vec{n}{}", type_suffix(s)),
            Value::Matrix(r, c, s) => write!(f, "mat{r}{c}{}", type_suffix(s)),
            Value::Quat(s) => write!(f, "quat{}", type_suffix(s)),
            Value::Transform(s) => write!(f, "transform{}", type_suffix(s)),
            Value::Struct(id) => f.write_str(&id.def().key),
            Value::Texture(n) => f.write_str(Query::Texture(n).name()),
        }
    }
}

/// Warp's built-in vector, matrix and quaternion type names (`vec3`, `mat33d`, `quatf`).
pub fn composite_type(name: &str) -> Option<Value> {
    let float_suffix = |rest: &str| match rest {
        "" | "f" => Some(Scalar::Float32),
        "d" => Some(Scalar::Float64),
        "h" => Some(Scalar::Float16),
        _ => None,
    };
    if let Some(rest) = name.strip_prefix("transform") {
        return float_suffix(rest).map(Value::Transform);
    }
    if let Some(rest) = name.strip_prefix("spatial_vector") {
        return float_suffix(rest).map(|s| Value::Vector(6, s));
    }
    if let Some(rest) = name.strip_prefix("spatial_matrix") {
        return float_suffix(rest).map(|s| Value::Matrix(6, 6, s));
    }
    let (base, suffix) = if let Some(rest) = name.strip_prefix("vec") {
        let n = rest.chars().next()?.to_digit(10)? as u8;
        (Value::Vector(n, Scalar::Float32), &rest[1..])
    } else if let Some(rest) = name.strip_prefix("mat") {
        let mut ds = rest.chars();
        let r = ds.next()?.to_digit(10)? as u8;
        let c = ds.next()?.to_digit(10)? as u8;
        (Value::Matrix(r, c, Scalar::Float32), &rest[2..])
    } else if let Some(rest) = name.strip_prefix("quat") {
        (Value::Quat(Scalar::Float32), rest)
    } else {
        return None;
    };
    let dtype = match suffix {
        "" | "f" => Scalar::Float32,
        "d" => Scalar::Float64,
        "h" => Scalar::Float16,
        "i" => Scalar::Int32,
        "ui" => Scalar::UInt32,
        "l" => Scalar::Int64,
        "ul" => Scalar::UInt64,
        "s" => Scalar::Int16,
        "us" => Scalar::UInt16,
        "b" => Scalar::Int8,
        "ub" => Scalar::UInt8,
        _ => return None,
    };
    let ok_dims = |n: u8| (2..=4).contains(&n);
    match base {
        Value::Vector(n, _) if ok_dims(n) => Some(Value::Vector(n, dtype)),
        Value::Matrix(r, c, _) if ok_dims(r) && r == c && dtype.is_float() => {
            Some(Value::Matrix(r, c, dtype))
        }
        Value::Quat(_) if dtype.is_float() => Some(Value::Quat(dtype)),
        _ => None,
    }
}

/// Which of warp's array families an array belongs to: they index alike and
/// differ in their C++ type (`wp::indexedarray_t<T>`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrayKind {
    /// `wp.array`
    Array,
    /// `wp.indexedarray`
    Indexed,
    /// `wp.fabricarray`
    Fabric,
    /// `wp.indexedfabricarray`
    IndexedFabric,
    /// A fixed-size local array (`wp.zeros(shape, dtype=)` in a kernel): its element count.
    Fixed(u32),
}

impl ArrayKind {
    /// The C++ class template (`wp::array_t`).
    pub fn class(self) -> &'static str {
        match self {
            ArrayKind::Array => "wp::array_t<",
            ArrayKind::Indexed => "wp::indexedarray_t<",
            ArrayKind::Fabric => "wp::fabricarray_t<",
            ArrayKind::IndexedFabric => "wp::indexedfabricarray_t<",
            ArrayKind::Fixed(_) => "wp::fixedarray_t<",
        }
    }

    /// warp's Python class name (`indexedarray`).
    pub fn name(self) -> &'static str {
        match self {
            ArrayKind::Array => "array",
            ArrayKind::Indexed => "indexedarray",
            ArrayKind::Fabric => "fabricarray",
            ArrayKind::IndexedFabric => "indexedfabricarray",
            ArrayKind::Fixed(_) => "fixedarray",
        }
    }

    /// Whether an argument of this kind fits a parameter of kind `param`
    /// (warp's array polymorphism: a fixed array is an `array`).
    pub fn fits(self, param: ArrayKind) -> bool {
        match (self, param) {
            (ArrayKind::Fixed(_), ArrayKind::Fixed(_) | ArrayKind::Array) => true,
            (ArrayKind::Array, ArrayKind::Fixed(_)) => true,
            (a, b) => a == b,
        }
    }

    /// Fabric and fixed arrays make plain arrays when viewed or sliced.
    pub fn view(self) -> ArrayKind {
        match self {
            ArrayKind::Indexed => ArrayKind::Indexed,
            _ => ArrayKind::Array,
        }
    }

    fn push_ctype(self, dtype: Value, out: &mut String) {
        out.put(self.class());
        if let ArrayKind::Fixed(n) = self {
            out.put_all(&[itoa::Buffer::new().format(n), ", "]);
        }
        dtype.push_ctype(out);
        out.push('>');
    }
}

/// A kernel value's type. References are pointers into arrays (`a[i]` before it is loaded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(Scalar),
    Vector(u8, Scalar),
    Matrix(u8, u8, Scalar),
    Quat(Scalar),
    Transform(Scalar),
    Struct(StructId),
    Array {
        dtype: Value,
        ndim: usize,
        kind: ArrayKind,
    },
    Ref(Value),
    /// A pointer to an array descriptor (an array field of a struct, `&(s.arr)`).
    ArrayRef {
        dtype: Value,
        ndim: usize,
        kind: ArrayKind,
    },
    /// `range()` iterator state.
    Range,
    /// A block-level tile (`wp.tile_load`, `wp.tile_zeros`, ...).
    Tile(Tile),
    /// A tuple of `n` int32 values (`(i * 8, j * 4)` as a tile shape or offset).
    IntTuple(u8),
    /// A tuple of values of other types (warp's `tuple_t`), by its entry in
    /// the table of tuple types ([`Type::tuple_of`] makes either kind).
    Tuple(TupleId),
    /// The string constant `"shared"` (true) or `"register"` of a `storage=` argument.
    StorageStr(bool),
    /// An array's `shape` (`wp::shape_t`); `true`: a reference to it (`&(a.shape)`).
    Shape(bool),
    /// A slice `start:stop:step` of an array subscript (`wp::slice_t`).
    Slice,
    /// A string constant (`wp.printf`'s format): index of its text in the function's strings.
    Str(u32),
    /// The state or result of a spatial query (`wp.mesh_query_point`, `wp.hash_grid_query`, ...).
    Query(Query),
    /// A block-wide stack of elements of this type and capacity (`wp.tile_stack`).
    TileStack(Value, u32),
}

/// warp's opaque C++ structs: the query objects a builtin returns, some with
/// fields (`MeshQueryPoint.face`), some iterated (`for i in hash_grid_query`),
/// and the textures a kernel takes (`wp.Texture2D`, with `width` and `height`).
/// Several query kinds share one C++ struct; the kind picks the overloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Query {
    MeshPoint,
    MeshRay,
    /// `MeshQueryAABB`.
    MeshAabb,
    MeshSphere,
    /// `MeshQuery`: a mesh query of either kind.
    Mesh,
    BvhAabb,
    BvhRay,
    BvhSphere,
    BvhCapsule,
    /// `BvhQuery`: a BVH query of any kind.
    Bvh,
    /// `HashGridQuery` of points of this precision.
    HashGrid(Scalar),
    /// `MeshQueryAABBTiled`: a block-wide mesh query (`wp.tile_mesh_query_aabb`).
    MeshAabbTiled,
    /// `BvhQueryTiled`: a block-wide BVH query (`wp.tile_bvh_query_aabb` / `_ray`).
    BvhTiled,
    /// `Texture1D`, `Texture2D`, `Texture3D`: a texture of 1 to 3 dimensions.
    Texture(u8),
    /// `Mesh`: a mesh's arrays (`wp.mesh_get(id)`), read through its fields.
    MeshObject,
}

impl Query {
    /// The C++ struct (without the `wp::` namespace).
    pub fn native(self) -> &'static str {
        match self {
            Query::MeshPoint => "mesh_query_point_t",
            Query::MeshRay => "mesh_query_ray_t",
            Query::MeshAabb | Query::MeshSphere | Query::Mesh => "mesh_query_aabb_t",
            Query::BvhAabb | Query::BvhRay | Query::BvhSphere | Query::BvhCapsule | Query::Bvh => {
                "bvh_query_t"
            }
            Query::HashGrid(Scalar::Float16) => "hash_grid_query_h",
            Query::HashGrid(Scalar::Float64) => "hash_grid_query_d",
            Query::HashGrid(_) => "hash_grid_query_f",
            Query::MeshAabbTiled => "mesh_query_aabb_thread_block_t",
            Query::BvhTiled => "bvh_query_thread_block_t",
            Query::MeshObject => "Mesh",
            Query::Texture(1) => "texture1d_t",
            Query::Texture(2) => "texture2d_t",
            Query::Texture(_) => "texture3d_t",
        }
    }

    /// warp's Python class name (messages, signatures).
    pub fn name(self) -> &'static str {
        match self {
            Query::MeshPoint => "MeshQueryPoint",
            Query::MeshRay => "MeshQueryRay",
            Query::MeshAabb => "MeshQueryAABB",
            Query::MeshSphere => "MeshQuerySphere",
            Query::Mesh => "MeshQuery",
            Query::BvhAabb => "BvhQueryAabb",
            Query::BvhRay => "BvhQueryRay",
            Query::BvhSphere => "BvhQuerySphere",
            Query::BvhCapsule => "BvhQueryCapsule",
            Query::Bvh => "BvhQuery",
            Query::HashGrid(Scalar::Float16) => "HashGridQueryH",
            Query::HashGrid(Scalar::Float64) => "HashGridQueryD",
            Query::HashGrid(_) => "HashGridQuery",
            Query::MeshAabbTiled => "MeshQueryAABBTiled",
            Query::BvhTiled => "BvhQueryTiled",
            Query::MeshObject => "Mesh",
            Query::Texture(1) => "Texture1D",
            Query::Texture(2) => "Texture2D",
            Query::Texture(_) => "Texture3D",
        }
    }

    pub fn from_name(name: &str) -> Option<Query> {
        Some(match name {
            "MeshQueryPoint" => Query::MeshPoint,
            "MeshQueryRay" => Query::MeshRay,
            "MeshQueryAABB" => Query::MeshAabb,
            "MeshQuerySphere" => Query::MeshSphere,
            "MeshQuery" => Query::Mesh,
            "BvhQueryAabb" => Query::BvhAabb,
            "BvhQueryRay" => Query::BvhRay,
            "BvhQuerySphere" => Query::BvhSphere,
            "BvhQueryCapsule" => Query::BvhCapsule,
            "BvhQuery" => Query::Bvh,
            "HashGridQueryH" => Query::HashGrid(Scalar::Float16),
            "HashGridQueryD" => Query::HashGrid(Scalar::Float64),
            "HashGridQuery" => Query::HashGrid(Scalar::Float32),
            "MeshQueryAABBTiled" => Query::MeshAabbTiled,
            "BvhQueryTiled" => Query::BvhTiled,
            "Mesh" => Query::MeshObject,
            "Texture1D" => Query::Texture(1),
            "Texture2D" => Query::Texture(2),
            "Texture3D" => Query::Texture(3),
            _ => return None,
        })
    }

    /// The erased parent a concrete kind also matches as (warp's `_wp_erase_to_`).
    pub fn erased(self) -> Query {
        match self {
            Query::MeshAabb | Query::MeshSphere => Query::Mesh,
            Query::BvhAabb | Query::BvhRay | Query::BvhSphere | Query::BvhCapsule => Query::Bvh,
            q => q,
        }
    }

    /// Field `name` of a mesh query's result or of a texture (warp's `vars`
    /// of `MeshQueryPoint`, `MeshQueryRay`, `Texture1D`, ...): its name as a
    /// static string (an origin step keeps it) and its type.
    pub fn field(self, name: &str) -> Option<(&'static str, Type)> {
        let f = Type::F32;
        let ray = self == Query::MeshRay;
        let mesh = matches!(self, Query::MeshPoint | Query::MeshRay);
        let dims = match self {
            Query::Texture(n) => n,
            _ => 0,
        };
        if self == Query::MeshObject {
            let array = |dtype| Type::Array {
                dtype,
                ndim: 1,
                kind: ArrayKind::Array,
            };
            return match name {
                "points" => Some(("points", array(Value::Vector(3, Scalar::Float32)))),
                "velocities" => Some(("velocities", array(Value::Vector(3, Scalar::Float32)))),
                "indices" => Some(("indices", array(Value::Scalar(Scalar::Int32)))),
                _ => None,
            };
        }
        [
            ("width", Type::I32, dims >= 1),
            ("height", Type::I32, dims >= 2),
            ("depth", Type::I32, dims >= 3),
            ("result", Type::BOOL, mesh),
            ("sign", f, mesh),
            ("u", f, mesh),
            ("v", f, mesh),
            ("face", Type::I32, mesh),
            ("t", f, ray),
            ("normal", Type::Vector(3, Scalar::Float32), ray),
        ]
        .into_iter()
        .find(|(n, _, has)| *has && *n == name)
        .map(|(n, t, _)| (n, t))
    }
}

/// A tile type as warp's `types.tile` describes it: element type, shape,
/// strides and storage. `obj` identifies the Python type object: warp changes
/// a tile's storage to shared in place when an element is read (`t[i]`) or a
/// view is taken, which changes the declaration of every variable holding
/// that object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tile {
    pub dtype: Value,
    pub ndim: u8,
    /// The extents of the `ndim` dimensions (up to 4, each below 65536: a
    /// tile lives in a block's registers or shared memory), kept in 16 bits
    /// so that a tile is no larger than the other types a variable holds.
    pub shape: [u16; 4],
    /// The strides in elements where they are not row-major (a view: a
    /// transpose, a slice, a reversed or broadcast axis); `None` for a
    /// row-major tile, so that equal layouts compare equal.
    pub strides: Option<[i16; 4]>,
    pub shared: bool,
    /// A view (`wp.tile_view`, `t[i]`, `t[a:b]`, `wp.tile_transpose`):
    /// shared, not owning its storage.
    pub view: bool,
    pub obj: u32,
}

/// A tile's extents, as a slice of `u32`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    n: u8,
    v: [u32; 4],
}

impl std::ops::Deref for Dims {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        &self.v[..self.n as usize]
    }
}

impl Tile {
    /// The largest tile extent (see [`Tile::shape`]).
    pub const MAX_EXTENT: u32 = u16::MAX as u32;

    /// A new owning shared tile of this one's element type and shape: what
    /// warp's `copy` and `where` give for a shared tile (`owner=True`).
    pub fn shared_copy(&self) -> Tile {
        let mut t = Tile::new(self.dtype, &self.dims());
        t.shared = true;
        t
    }

    /// A row-major, owning register tile of `dtype` and `shape` (1 to 4
    /// extents, each at most [`Tile::MAX_EXTENT`]: the callers check).
    pub fn new(dtype: Value, shape: &[u32]) -> Tile {
        let mut s = [0u16; 4];
        for (d, &n) in s.iter_mut().zip(shape) {
            *d = u16::try_from(n).expect("tile extents are checked");
        }
        Tile {
            dtype,
            ndim: shape.len() as u8,
            shape: s,
            strides: None,
            shared: false,
            view: false,
            obj: 0,
        }
    }

    /// A non-owning shared view of `dtype` with these extents and strides
    /// (warp's `tile(..., strides=..., storage="shared", owner=False)`);
    /// `None` where a stride does not fit the type.
    pub fn view_of(dtype: Value, shape: &[u32], strides: &[i64]) -> Option<Tile> {
        let mut t = Tile::new(dtype, shape);
        t.shared = true;
        t.view = true;
        t.set_strides(strides).then_some(t)
    }

    /// Sets the strides (kept only where they are not row-major); false
    /// where one is beyond 16 bits.
    pub fn set_strides(&mut self, strides: &[i64]) -> bool {
        let row_major = Tile::row_major(&self.dims());
        if strides.len() == row_major.len() && strides.iter().zip(&row_major).all(|(a, &b)| *a == b)
        {
            self.strides = None;
            return true;
        }
        let mut st = [0i16; 4];
        for (d, &x) in st.iter_mut().zip(strides) {
            let Ok(x) = i16::try_from(x) else {
                return false;
            };
            *d = x;
        }
        self.strides = Some(st);
        true
    }

    pub fn dims(&self) -> Dims {
        Dims {
            n: self.ndim,
            v: self.shape.map(u32::from),
        }
    }

    /// Extent `k` (0 past the last dimension).
    pub fn extent(&self, k: usize) -> u32 {
        self.shape.get(k).map_or(0, |&n| u32::from(n))
    }

    fn joined<T: std::fmt::Display>(v: &[T]) -> String {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The strides of a row-major tile of these extents.
    fn row_major(dims: &[u32]) -> Vec<i64> {
        let mut st = vec![1i64; dims.len()];
        for i in (0..dims.len().saturating_sub(1)).rev() {
            st[i] = st[i + 1] * i64::from(dims[i + 1]);
        }
        st
    }

    /// Strides in elements (warp's `tile.strides`).
    pub fn strides(&self) -> Vec<i64> {
        match self.strides {
            Some(st) => st[..self.ndim as usize]
                .iter()
                .map(|&x| i64::from(x))
                .collect(),
            None => Tile::row_major(&self.dims()),
        }
    }

    /// The C++ type (warp's `tile.ctype()`).
    pub fn ctype(&self) -> String {
        // Put together in one string sized up front (`format!` grew its own).
        let dt = self.dtype.ctype();
        let shape = Tile::joined(&self.dims());
        let mut s = String::with_capacity(128);
        if self.shared {
            s.put_all(&[
                "wp::tile_shared_t<",
                &dt,
                ",wp::tile_layout_strided_t<wp::tile_shape_t<",
                &shape,
                ">, wp::tile_stride_t<",
                &Tile::joined(&self.strides()),
                ">>, ",
                if self.view { "false" } else { "true" },
                ">",
            ]);
        } else {
            s.put_all(&[
                "wp::tile_register_t<",
                &dt,
                ",wp::tile_layout_register_t<wp::tile_shape_t<",
                &shape,
                ">>>",
            ]);
        }
        s
    }

    /// The C++ initializer of a declaration (warp's `tile.cinit()`).
    pub fn cinit(&self, requires_grad: bool) -> String {
        if self.view {
            // set by the call that creates the view
            "nullptr".to_string()
        } else if self.shared {
            format!(
                "wp::tile_alloc_empty<{},wp::tile_shape_t<{}>,wp::tile_stride_t<{}>,{requires_grad}>()",
                self.dtype.ctype(),
                Tile::joined(&self.dims()),
                Tile::joined(&self.strides())
            )
        } else {
            format!("{}{{}}", self.ctype())
        }
    }
}

impl Type {
    pub const F32: Type = Type::Scalar(Scalar::Float32);
    pub const I32: Type = Type::Scalar(Scalar::Int32);
    pub const BOOL: Type = Type::Scalar(Scalar::Bool);

    /// The C++ type of a variable holding this value (`value_type` strips references).
    pub fn ctype(&self, value_type: bool) -> std::borrow::Cow<'static, str> {
        use std::borrow::Cow;
        match *self {
            Type::Scalar(s) => Cow::Borrowed(s.ctype()),
            Type::Ref(Value::Scalar(s)) if value_type => Cow::Borrowed(s.ctype()),
            Type::Array { .. } | Type::Ref(_) | Type::ArrayRef { .. } => {
                let mut out = String::with_capacity(40);
                self.push_ctype(&mut out, value_type);
                Cow::Owned(out)
            }
            Type::Range => Cow::Borrowed("wp::range_t"),
            Type::Shape(true) if !value_type => Cow::Borrowed("wp::shape_t*"),
            Type::Shape(_) => Cow::Borrowed("wp::shape_t"),
            Type::Slice => Cow::Borrowed("wp::slice_t"),
            Type::Struct(id) => Cow::Borrowed(id.def().native.as_str()),
            Type::Query(q) => Cow::Owned(format!("wp::{}", q.native())),
            Type::Tile(t) => Cow::Owned(t.ctype()),
            Type::TileStack(v, capacity) => {
                Cow::Owned(format!("wp::tile_stack_t<{}, {capacity}>", v.ctype()))
            }
            Type::StorageStr(_) | Type::Str(_) => Cow::Borrowed("wp::str"),
            Type::IntTuple(n) => Cow::Owned(format!(
                "wp::tuple_t<{}>",
                vec!["wp::int32"; n as usize].join(", ")
            )),
            Type::Tuple(id) => Cow::Owned(id.ctype()),
            t => Cow::Owned(t.value().map(Value::ctype).unwrap_or_default()),
        }
    }

    /// Appends [`Type::ctype`] to `out` without a string of its own for
    /// scalars, arrays and references, the types of nearly every variable.
    pub fn push_ctype(&self, out: &mut String, value_type: bool) {
        if let Some(spelled) = self.spelled_ctype() {
            return out.put(spelled);
        }
        match *self {
            Type::Scalar(s) => out.put(s.ctype()),
            Type::Array { dtype, kind, .. } => kind.push_ctype(dtype, out),
            Type::Ref(v) => {
                v.push_ctype(out);
                if !value_type {
                    out.push('*');
                }
            }
            Type::ArrayRef { dtype, kind, .. } => {
                kind.push_ctype(dtype, out);
                if !value_type {
                    out.push('*');
                }
            }
            Type::Struct(id) => out.put(&id.def().native),
            Type::Vector(..) | Type::Matrix(..) | Type::Quat(_) | Type::Transform(_) => {
                match self.value() {
                    Some(v) => v.push_ctype(out),
                    None => out.put(&self.ctype(value_type)),
                }
            }
            _ => out.put(&self.ctype(value_type)),
        }
    }

    /// [`Value::spelled_ctype`] of a scalar, vector or matrix type; None for
    /// the others (whose spelling may also depend on `value_type`).
    pub fn spelled_ctype(&self) -> Option<&'static str> {
        match *self {
            Type::Scalar(s) => Some(s.ctype()),
            Type::Vector(..) | Type::Matrix(..) => self.value()?.spelled_ctype(),
            _ => None,
        }
    }

    /// The type of the adjoint warp passes for a parameter of this type in a
    /// function's or CUDA kernel's signature: an indexed array's gradient is a regular array.
    pub fn adjoint_param(&self) -> Type {
        match *self {
            Type::Array {
                dtype,
                ndim,
                kind: ArrayKind::Indexed,
            } => Type::Array {
                dtype,
                ndim,
                kind: ArrayKind::Array,
            },
            t => t,
        }
    }

    /// The value type behind a reference; other types unchanged.
    pub fn strip_ref(&self) -> Type {
        match *self {
            Type::Ref(v) => v.to_type(),
            Type::Shape(_) => Type::Shape(false),
            Type::ArrayRef { dtype, ndim, kind } => Type::Array { dtype, ndim, kind },
            t => t,
        }
    }

    pub fn is_ref(&self) -> bool {
        matches!(
            self,
            Type::Ref(_) | Type::Shape(true) | Type::ArrayRef { .. }
        )
    }

    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// The value type, for scalars, vectors, matrices and quaternions.
    pub fn value(&self) -> Option<Value> {
        match *self {
            Type::Scalar(s) => Some(Value::Scalar(s)),
            Type::Vector(n, s) => Some(Value::Vector(n, s)),
            Type::Matrix(r, c, s) => Some(Value::Matrix(r, c, s)),
            Type::Quat(s) => Some(Value::Quat(s)),
            Type::Transform(s) => Some(Value::Transform(s)),
            Type::Struct(id) => Some(Value::Struct(id)),
            Type::Query(Query::Texture(n)) => Some(Value::Texture(n)),
            _ => None,
        }
    }

    /// warp's `get_type_code` (struct hashes are made of these).
    pub fn type_code(&self) -> String {
        match *self {
            Type::Array { dtype, ndim, kind } => {
                let prefix = match kind {
                    ArrayKind::Array | ArrayKind::Fixed(_) => "a",
                    ArrayKind::Indexed => "ia",
                    ArrayKind::Fabric => "fa",
                    ArrayKind::IndexedFabric => "ifa",
                };
                format!("{prefix}{ndim}{}", dtype.type_code())
            }
            t => t.value().map(Value::type_code).unwrap_or_default(),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Array { dtype, ndim, kind } => {
                write!(f, "{}(ndim={ndim}, dtype={dtype})", kind.name())
            }
            Type::Ref(v) => write!(f, "Reference[{v}]"),
            Type::ArrayRef { dtype, ndim, kind } => {
                write!(f, "Reference[{}(ndim={ndim}, dtype={dtype})]", kind.name())
            }
            Type::Range => f.write_str("range_t"),
            Type::Shape(_) => f.write_str("shape_t"),
            Type::Slice => f.write_str("slice_t"),
            Type::Tile(t) => write!(
                f,
                "tile(dtype={}, shape={:?}, storage={})",
                t.dtype,
                &*t.dims(),
                if t.shared { "shared" } else { "register" }
            ),
            Type::IntTuple(n) => write!(f, "tuple[int32 x {n}]"),
            Type::TileStack(v, capacity) => write!(f, "tile_stack(dtype={v}, capacity={capacity})"),
            Type::Tuple(id) => {
                let elems: Vec<String> = id.elems().iter().map(|t| t.to_string()).collect();
                write!(f, "tuple[{}]", elems.join(", "))
            }
            Type::StorageStr(_) | Type::Str(_) => f.write_str("str"),
            Type::Query(q) => f.write_str(q.name()),
            t => write!(f, "{}", t.value().expect("value type")),
        }
    }
}

/// Index of a tuple type in the process-wide table of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TupleId(u32);

/// Element types, and a bit per element spelled with its Python name in C++
/// (`tuple[int, float]` annotates `wp::tuple_t<int, float>`).
type TupleTable = (
    Vec<(&'static [Type], u64)>,
    std::collections::HashMap<(Vec<Type>, u64), u32>,
);

/// Tuple types, interned by their element types (a module uses a few).
static TUPLES: std::sync::LazyLock<std::sync::RwLock<TupleTable>> =
    std::sync::LazyLock::new(Default::default);

impl TupleId {
    pub fn elems(self) -> &'static [Type] {
        TUPLES.read().expect("tuple table").0[self.0 as usize].0
    }

    /// The C++ type: `wp::tuple_t<...>` of the elements' types.
    fn ctype(self) -> String {
        let (elems, python) = TUPLES.read().expect("tuple table").0[self.0 as usize];
        let mut out = String::from("wp::tuple_t<");
        for (i, t) in elems.iter().enumerate() {
            if i > 0 {
                out.put(", ");
            }
            match (python >> i.min(63) & 1 == 1, t) {
                (true, Type::Scalar(Scalar::Float32)) => out.put("float"),
                (true, Type::Scalar(Scalar::Int32)) => out.put("int"),
                _ => t.push_ctype(&mut out, false),
            }
        }
        out.push('>');
        out
    }
}

impl Type {
    /// The type of a tuple of `elems`: one to four int32 values are the
    /// [`Type::IntTuple`] tile shapes use, others a [`Type::Tuple`].
    pub fn tuple_of(elems: &[Type]) -> Type {
        if (1..=4).contains(&elems.len()) && elems.iter().all(|t| *t == Type::I32) {
            return Type::IntTuple(elems.len() as u8);
        }
        Type::tuple_spelled(elems, 0)
    }

    /// A tuple type whose elements with a bit set in `python` are spelled
    /// with their Python names (`float`, `int`): a `tuple[...]` annotation.
    pub fn tuple_spelled(elems: &[Type], python: u64) -> Type {
        let key = (elems.to_vec(), python);
        if let Some(&id) = TUPLES.read().expect("tuple table").1.get(&key) {
            return Type::Tuple(TupleId(id));
        }
        let mut table = TUPLES.write().expect("tuple table");
        if let Some(&id) = table.1.get(&key) {
            return Type::Tuple(TupleId(id));
        }
        let id = table.0.len() as u32;
        table.1.insert(key, id);
        table
            .0
            .push((Box::leak(elems.to_vec().into_boxed_slice()), python));
        Type::Tuple(TupleId(id))
    }

    /// Whether a value of this type can be passed for a parameter of type
    /// `param`: the same type, or tuples of the same element types.
    pub fn passes_as(&self, param: &Type) -> bool {
        self == param
            || matches!((self.tuple_elems(), param.tuple_elems()), (Some(a), Some(b)) if a == b)
    }

    /// The element types of a tuple type.
    pub fn tuple_elems(&self) -> Option<std::borrow::Cow<'static, [Type]>> {
        match *self {
            Type::IntTuple(n) => Some(std::borrow::Cow::Owned(vec![Type::I32; n as usize])),
            Type::Tuple(id) => Some(std::borrow::Cow::Borrowed(id.elems())),
            _ => None,
        }
    }
}

/// A compile-time constant, as warp keeps Python literals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConstVal {
    Int(i128),
    Float(f64),
    Bool(bool),
    /// A vector, matrix, quaternion or transform value (a module-level
    /// `wp.vec3(...)`, a default argument), by its entry in the table of them.
    Composite(CompositeId),
}

/// A composite constant: its type and its components (scalar constants,
/// floats already rounded to the component type, as warp's ctypes storage
/// holds them).
#[derive(Debug, Clone, PartialEq)]
pub struct CompositeConst {
    pub ty: Value,
    pub items: Vec<ConstVal>,
}

/// Index of a composite constant in the process-wide table of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompositeId(u32);

type CompositeTable = (
    Vec<&'static CompositeConst>,
    std::collections::HashMap<String, u32>,
);

/// Composite constants, interned by their type and C++ initializer: a module
/// seldom has any, and the same few recur.
static COMPOSITES: std::sync::LazyLock<std::sync::RwLock<CompositeTable>> =
    std::sync::LazyLock::new(Default::default);

impl CompositeId {
    /// The id of `c`, added to the table if it is not there.
    pub fn intern(c: CompositeConst) -> CompositeId {
        let mut key = c.ty.ctype();
        key.push('=');
        push_initializer(&mut key, &c);
        if let Some(&id) = COMPOSITES.read().expect("composite table").1.get(&key) {
            return CompositeId(id);
        }
        let mut table = COMPOSITES.write().expect("composite table");
        if let Some(&id) = table.1.get(&key) {
            return CompositeId(id);
        }
        let id = table.0.len() as u32;
        table.1.insert(key, id);
        table.0.push(Box::leak(Box::new(c)));
        CompositeId(id)
    }

    pub fn get(self) -> &'static CompositeConst {
        COMPOSITES.read().expect("composite table").0[self.0 as usize]
    }
}

/// warp's `constant_str` of a ctypes array value:
/// `wp::initializer_array<3,wp::float32>{1.0, 2.0, 3.0}` (components as
/// Python's `str(x).lower()` spells them).
fn push_initializer(out: &mut String, c: &CompositeConst) {
    out.put("wp::initializer_array<");
    out.put(itoa::Buffer::new().format(c.items.len()));
    out.push(',');
    let dtype = c.ty.dtype();
    if dtype == Scalar::Bool {
        out.put("bool");
    } else {
        out.put_all(&["wp::", dtype.name()]);
    }
    out.put(">{");
    for (i, item) in c.items.iter().enumerate() {
        if i > 0 {
            out.put(", ");
        }
        match *item {
            ConstVal::Float(v) if v.is_nan() => out.put("nan"),
            ConstVal::Float(v) if v.is_infinite() => out.put(if v > 0.0 { "inf" } else { "-inf" }),
            k => k.push_c_str(out),
        }
    }
    out.push('}');
}

impl ConstVal {
    /// The type warp gives a Python literal of this kind.
    pub fn literal_type(self) -> Type {
        match self {
            ConstVal::Int(_) => Type::I32,
            ConstVal::Float(_) => Type::F32,
            ConstVal::Bool(_) => Type::BOOL,
            ConstVal::Composite(id) => id.get().ty.to_type(),
        }
    }

    /// Whether warp folds a unary minus on this constant (a Python int, float or bool).
    pub fn is_python_scalar(self) -> bool {
        !matches!(self, ConstVal::Composite(_))
    }

    /// C++ spelling, as warp's `constant_str` prints a Python value.
    pub fn c_str(self) -> String {
        let mut out = String::new();
        self.push_c_str(&mut out);
        out
    }

    /// Appends [`ConstVal::c_str`] to `out`.
    pub fn push_c_str(self, out: &mut String) {
        match self {
            ConstVal::Int(v) => out.put(itoa::Buffer::new().format(v)),
            ConstVal::Float(v) => push_python_float_repr(out, v),
            ConstVal::Bool(true) => out.put("true"),
            ConstVal::Bool(false) => out.put("false"),
            ConstVal::Composite(id) => push_initializer(out, id.get()),
        }
    }

    /// Python's unary minus (callers fold it only on [`ConstVal::is_python_scalar`] values).
    pub fn negated(self) -> ConstVal {
        match self {
            ConstVal::Int(v) => ConstVal::Int(-v),
            ConstVal::Float(v) => ConstVal::Float(-v),
            // Python: -True == -1
            ConstVal::Bool(b) => ConstVal::Int(-(b as i128)),
            ConstVal::Composite(_) => self,
        }
    }

    pub fn truthy(self) -> bool {
        match self {
            ConstVal::Int(v) => v != 0,
            ConstVal::Float(v) => v != 0.0,
            ConstVal::Bool(b) => b,
            ConstVal::Composite(_) => true,
        }
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip, in fixed notation
/// for exponents in [-4, 16) and scientific (`1e-05`, `1e+16`) otherwise;
/// `inf`/`nan` are spelled as warp's constant printer spells them.
pub fn python_float_repr(v: f64) -> String {
    let mut out = String::with_capacity(24);
    push_python_float_repr(&mut out, v);
    out
}

/// Appends [`python_float_repr`] of `v` to `out`. Constants are printed on
/// every declaration, so this avoids the formatting machinery: ryu gives the
/// shortest round-trip digits (as Python's repr does), which are then laid out
/// the way Python lays them out.
pub fn push_python_float_repr(out: &mut String, v: f64) {
    if v.is_nan() {
        return out.put("NAN");
    }
    if v.is_infinite() {
        return out.put(if v > 0.0 { "INFINITY" } else { "-INFINITY" });
    }
    if v == 0.0 {
        return out.put(if v.is_sign_negative() { "-0.0" } else { "0.0" });
    }
    // A whole number below 2^53 is exact, and Python spells it as the integer
    // and ".0" (`2.0`, `-17.0`): no search for the shortest digits.
    const EXACT: f64 = (1u64 << 53) as f64;
    if v.abs() < EXACT && (v as i64) as f64 == v {
        return out.put_all(&[itoa::Buffer::new().format(v as i64), ".0"]);
    }
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(v);
    let (negative, text) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text),
    };
    // ryu writes positional notation as Python does ("12.5", "3.0", "0.001")
    // for decimal exponents -5 to 15; Python's repr goes to exponents from -5
    // (`0.0000x`): the common literals need no rewriting.
    if !text.starts_with("0.0000") && !text.contains('e') {
        return out.put_all(&[if negative { "-" } else { "" }, text]);
    }
    // ryu writes "123.45", "0.001" or "1.2345e-7": take the significant digits
    // and the decimal exponent of the first one.
    let (mantissa, e) = text.split_once('e').unwrap_or((text, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let (digits, exp): (String, i32) = if int.bytes().any(|b| b != b'0') {
        let int = int.trim_start_matches('0');
        ([int, frac].concat(), e + int.len() as i32 - 1)
    } else {
        let zeros = frac.len() - frac.trim_start_matches('0').len();
        (frac[zeros..].to_string(), e - zeros as i32 - 1)
    };
    let digits = digits.trim_end_matches('0');
    if negative {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        let point = exp + 1; // position of the decimal point within `digits`
        if point <= 0 {
            out.put("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.put(digits);
        } else if point as usize >= digits.len() {
            out.put(digits);
            out.extend(std::iter::repeat_n('0', point as usize - digits.len()));
            out.put(".0");
        } else {
            out.put_all(&[&digits[..point as usize], ".", &digits[point as usize..]]);
        }
    } else {
        out.put(&digits[..1]);
        if digits.len() > 1 {
            out.put_all(&[".", &digits[1..]]);
        }
        out.put(if exp < 0 { "e-" } else { "e+" });
        if exp.abs() < 10 {
            out.push('0');
        }
        out.put(itoa::Buffer::new().format(exp.abs()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        let cases = [
            (2.0, "2.0"),
            (0.5, "0.5"),
            (1e-05, "1e-05"),
            (0.0001, "0.0001"),
            (123456.789, "123456.789"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.1, "0.1"),
            (-1.0, "-1.0"),
            (1.5e-7, "1.5e-07"),
            (3.14159, "3.14159"),
            (1e100, "1e+100"),
            (-0.0, "-0.0"),
            (1e15, "1000000000000000.0"),
            (100.0, "100.0"),
            (0.00012345, "0.00012345"),
            (123e-20, "1.23e-18"),
            (5e-324, "5e-324"),
            (12345678901234567890.0, "1.2345678901234567e+19"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-2.5e-5, "-2.5e-05"),
            // Two shortest spellings round-trip here; CPython prints the
            // closer one, and Rust's `{:e}` (1.6582067800885623e15) does not.
            (1.6582067800885623e15, "1658206780088562.2"),
            // Whole numbers either side of 2^53, where exact ones stop.
            (9007199254740991.0, "9007199254740991.0"),
            (-9007199254740991.0, "-9007199254740991.0"),
            (9007199254740992.0, "9007199254740992.0"),
            (18014398509481984.0, "1.8014398509481984e+16"),
            (-17.0, "-17.0"),
        ];
        for (v, want) in cases {
            assert_eq!(python_float_repr(v), want, "{v}");
        }
    }

    #[test]
    fn float_repr_round_trips_with_the_shortest_digits() {
        // Over many bit patterns: the text parses back to the same float, with
        // as few significant digits as Rust's shortest `{:e}` needs.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if !v.is_finite() || v == 0.0 {
                continue;
            }
            let repr = python_float_repr(v);
            assert_eq!(
                repr.parse::<f64>().unwrap().to_bits(),
                v.to_bits(),
                "{repr}"
            );
            let sig = |t: &str| -> String {
                let m = t.split(['e', 'E']).next().unwrap();
                let d: String = m.chars().filter(char::is_ascii_digit).collect();
                d.trim_start_matches('0').trim_end_matches('0').to_string()
            };
            assert_eq!(
                sig(&repr).len(),
                sig(&format!("{v:e}")).len(),
                "{v:e} -> {repr}"
            );
        }
    }

    #[test]
    fn ctypes() {
        assert_eq!(Type::F32.ctype(false), "wp::float32");
        assert_eq!(Type::BOOL.ctype(false), "bool");
        assert_eq!(
            Type::Array {
                dtype: Value::Scalar(Scalar::Int32),
                ndim: 1,
                kind: ArrayKind::Array,
            }
            .ctype(false),
            "wp::array_t<wp::int32>"
        );
        assert_eq!(
            Type::Ref(Value::Scalar(Scalar::Float32)).ctype(false),
            "wp::float32*"
        );
        assert_eq!(
            Type::Ref(Value::Scalar(Scalar::Float32)).ctype(true),
            "wp::float32"
        );
    }
}
