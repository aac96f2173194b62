//! Turning a batch's prepared calls into an execution plan (seed 000, "Execution concurrency").
//!
//! Pure: no I/O, no clocks, so the rules are tested as data.

use tackle_protocol::Concurrency;
use tackle_tool::SerializationKey;

/// What the scheduler needs to know about one runnable call (in turn order).
#[derive(Clone, Debug)]
pub struct Runnable {
    pub index: usize,
    pub concurrency: Concurrency,
    pub key: Option<SerializationKey>,
}

/// The plan for one batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchPlan {
    /// Lanes that all start together, with no fan-out limit. Calls within a lane run one after
    /// another in turn order; a lane holds either one unkeyed call or every call sharing a key.
    pub parallel_lanes: Vec<Vec<usize>>,
    /// Exclusive calls, one at a time in turn order, after every parallel lane has finished.
    pub exclusive: Vec<usize>,
}

pub fn plan(calls: &[Runnable]) -> BatchPlan {
    let mut parallel_lanes: Vec<Vec<usize>> = Vec::new();
    let mut lane_of_key: std::collections::HashMap<&SerializationKey, usize> =
        std::collections::HashMap::new();
    let mut exclusive = Vec::new();
    for call in calls {
        match call.concurrency {
            Concurrency::Exclusive => exclusive.push(call.index),
            Concurrency::Parallel => match &call.key {
                None => parallel_lanes.push(vec![call.index]),
                Some(key) => match lane_of_key.get(key) {
                    Some(&lane) => parallel_lanes[lane].push(call.index),
                    None => {
                        lane_of_key.insert(key, parallel_lanes.len());
                        parallel_lanes.push(vec![call.index]);
                    }
                },
            },
        }
    }
    BatchPlan {
        parallel_lanes,
        exclusive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(index: usize, c: Concurrency, key: Option<&str>) -> Runnable {
        Runnable {
            index,
            concurrency: c,
            key: key.map(|k| SerializationKey(k.into())),
        }
    }

    #[test]
    fn plan_table() {
        use Concurrency::*;
        let cases: Vec<(Vec<Runnable>, BatchPlan)> = vec![
            (
                vec![],
                BatchPlan {
                    parallel_lanes: vec![],
                    exclusive: vec![],
                },
            ),
            (
                vec![
                    r(0, Parallel, None),
                    r(1, Parallel, None),
                    r(2, Parallel, None),
                ],
                BatchPlan {
                    parallel_lanes: vec![vec![0], vec![1], vec![2]],
                    exclusive: vec![],
                },
            ),
            (
                vec![
                    r(0, Parallel, Some("f:a")),
                    r(1, Parallel, Some("f:b")),
                    r(2, Parallel, Some("f:a")),
                    r(3, Parallel, None),
                    r(4, Parallel, Some("f:a")),
                ],
                BatchPlan {
                    parallel_lanes: vec![vec![0, 2, 4], vec![1], vec![3]],
                    exclusive: vec![],
                },
            ),
            (
                vec![
                    r(0, Exclusive, None),
                    r(1, Parallel, None),
                    r(2, Exclusive, Some("x")),
                    r(3, Parallel, None),
                ],
                BatchPlan {
                    parallel_lanes: vec![vec![1], vec![3]],
                    exclusive: vec![0, 2],
                },
            ),
        ];
        for (calls, want) in cases {
            assert_eq!(plan(&calls), want);
        }
    }
}
