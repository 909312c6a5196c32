#include "envs/box2d/bipedal_walker_physics.h"

#include <algorithm>
#include <cmath>

namespace recur::envs::bipedal {
namespace {

constexpr double kLegDown = -8 / kScale;
constexpr double kLegW = 8 / kScale;
constexpr double kLegH = 34 / kScale;
constexpr double kFriction = 2.5;
constexpr uint16_t kWalkerCategory = 0x0020;
constexpr uint16_t kGroundCategory = 0x0001;
constexpr int kHullPoly[5][2] = {{-30, +9}, {+6, +9}, {+34, +1}, {+34, -8}, {-30, -8}};

b2Vec2 vec(double x, double y) {  // pybox2d hands Python floats to Box2D as float
  return {static_cast<float>(x), static_cast<float>(y)};
}

double np_sign(double v) {
  return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0);
}

double clipped_abs(float a) {  // np.clip(np.abs(a), 0, 1)
  return std::clamp(std::abs(static_cast<double>(a)), 0.0, 1.0);
}

// Box2D 2.3's SetAwake(true) touches only sleeping bodies; 2.4.1's also restarts the sleep timer
// of an awake body. pybox2d's SetMotorSpeed/SetMaxMotorTorque wake both bodies on every call
// (2.3), 2.4.1's only when the value changes: this reproduces 2.3's effect.
void wake_if_asleep(b2Body* body) {
  if (!body->IsAwake()) body->SetAwake(true);
}

}  // namespace

class Physics::Contacts final : public b2ContactListener {
 public:
  explicit Contacts(Physics& p) : p_(p) {}
  void BeginContact(b2Contact* contact) override { touch(contact, true); }
  void EndContact(b2Contact* contact) override { touch(contact, false); }

 private:
  void touch(b2Contact* contact, bool begin) {
    const b2Body* a = contact->GetFixtureA()->GetBody();
    const b2Body* b = contact->GetFixtureB()->GetBody();
    if (begin && (a == p_.hull_ || b == p_.hull_)) p_.game_over_ = true;
    // A plain flag, as Gymnasium's: leaving one of two touching fixtures clears it.
    for (int side = 0; side < 2; ++side) {
      const b2Body* lower = p_.legs_[static_cast<size_t>(1 + 2 * side)];
      if (a == lower || b == lower) p_.contact_[static_cast<size_t>(side)] = begin;
    }
  }
  Physics& p_;
};

class Physics::Lidar final : public b2RayCastCallback {
 public:
  float fraction = 1.0f;
  b2Vec2 point{0, 0};
  float ReportFixture(b2Fixture* fixture, const b2Vec2& p, const b2Vec2&, float f) override {
    if ((fixture->GetFilterData().categoryBits & 1) == 0) return -1;  // the walker itself
    point = p;
    fraction = f;
    return f;  // clip the ray: the closest hit wins whatever the report order
  }
};

void observe(const WalkerState& s, std::span<float> obs) {
  const double values[kObsDim] = {
      s.angle,
      2.0 * s.omega / kFps,
      0.3 * s.vx * (kViewportW / kScale) / kFps,
      0.3 * s.vy * (kViewportH / kScale) / kFps,
      s.joint_angle[0],
      s.joint_speed[0] / kSpeedHip,
      s.joint_angle[1] + 1.0,
      s.joint_speed[1] / kSpeedKnee,
      s.contact[0] ? 1.0 : 0.0,
      s.joint_angle[2],
      s.joint_speed[2] / kSpeedHip,
      s.joint_angle[3] + 1.0,
      s.joint_speed[3] / kSpeedKnee,
      s.contact[1] ? 1.0 : 0.0,
      s.lidar[0],
      s.lidar[1],
      s.lidar[2],
      s.lidar[3],
      s.lidar[4],
      s.lidar[5],
      s.lidar[6],
      s.lidar[7],
      s.lidar[8],
      s.lidar[9],
  };
  for (int i = 0; i < kObsDim; ++i) obs[static_cast<size_t>(i)] = static_cast<float>(values[i]);
}

double shaping(const WalkerState& s) {
  return 130 * s.x / kScale - 5.0 * std::abs(s.angle);
}

double subtract_torque_cost(double reward, std::span<const float> action) {
  for (const float a : action) reward -= 0.00035 * kMotorsTorque * clipped_abs(a);
  return reward;
}

StepReward finish(double reward, bool game_over, double x) {
  StepReward r{reward, false};
  if (game_over || x < 0) r = {-100, true};
  if (x > kFinishX) r.terminated = true;
  return r;
}

Physics::Physics()
    : contacts_(std::make_unique<Contacts>(*this)), lidar_(std::make_unique<Lidar>()) {
  for (int i = 0; i < kLidarRays; ++i) {
    ray_dx_[static_cast<size_t>(i)] = std::sin(1.5 * i / 10.0) * kLidarRange;
    ray_dy_[static_cast<size_t>(i)] = std::cos(1.5 * i / 10.0) * kLidarRange;
  }
}

Physics::~Physics() {
  if (world_) world_->SetContactListener(nullptr);
}

void Physics::reset(const Terrain& terrain, double push_x) {
  if (world_) world_->SetContactListener(nullptr);
  world_ = std::make_unique<b2World>(b2Vec2(0, -10));  // pybox2d's b2World() default gravity
  world_->SetContactListener(contacts_.get());
  terrain_ = &terrain;
  game_over_ = false;
  contact_ = {false, false};
  has_prev_shaping_ = false;

  // Terrain: obstacle polygons (in generation order), then the edges.
  b2BodyDef ground_def;  // static at the origin
  b2FixtureDef ground;
  ground.friction = static_cast<float>(kFriction);
  ground.filter.categoryBits = kGroundCategory;
  obstacles_.clear();
  for (const Obstacle& o : terrain.obstacles) {
    b2Vec2 v[4];
    for (size_t k = 0; k < 4; ++k) v[k] = vec(o[k].x, o[k].y);
    b2PolygonShape shape;
    shape.Set(v, 4);
    ground.shape = &shape;
    b2Body* body = world_->CreateBody(&ground_def);
    body->CreateFixture(&ground);
    obstacles_.push_back(body);
  }
  for (int i = 0; i + 1 < kTerrainLength; ++i) {
    const auto k = static_cast<size_t>(i);
    b2EdgeShape edge;
    edge.SetTwoSided(vec(terrain.x[k], terrain.y[k]), vec(terrain.x[k + 1], terrain.y[k + 1]));
    ground.shape = &edge;
    world_->CreateBody(&ground_def)->CreateFixture(&ground);
  }

  // The walker.
  const double init_x = kTerrainStep * kTerrainStartpad / 2;
  const double init_y = kTerrainHeight + 2 * kLegH;
  b2FixtureDef part;
  part.restitution = 0;
  part.filter.categoryBits = kWalkerCategory;
  part.filter.maskBits = kGroundCategory;  // collide only with the ground

  b2PolygonShape hull_shape;
  b2Vec2 hull_v[5];
  for (size_t k = 0; k < 5; ++k)
    hull_v[k] = vec(kHullPoly[k][0] / kScale, kHullPoly[k][1] / kScale);
  hull_shape.Set(hull_v, 5);
  part.shape = &hull_shape;
  part.density = 5.0f;
  part.friction = 0.1f;
  b2BodyDef body_def;
  body_def.type = b2_dynamicBody;
  body_def.position = vec(init_x, init_y);
  hull_ = world_->CreateBody(&body_def);
  hull_->CreateFixture(&part);
  hull_->ApplyForceToCenter(vec(push_x, 0), true);

  b2PolygonShape upper_shape, lower_shape;
  upper_shape.SetAsBox(static_cast<float>(kLegW / 2), static_cast<float>(kLegH / 2));
  lower_shape.SetAsBox(static_cast<float>(0.8 * kLegW / 2), static_cast<float>(kLegH / 2));
  part.density = 1.0f;
  part.friction = 0.2f;  // fixtureDef default
  for (int side = 0; side < 2; ++side) {
    const int i = side == 0 ? -1 : +1;
    body_def.angle = static_cast<float>(i * 0.05);

    body_def.position = vec(init_x, init_y - kLegH / 2 - kLegDown);
    part.shape = &upper_shape;
    b2Body* upper = world_->CreateBody(&body_def);
    upper->CreateFixture(&part);
    b2RevoluteJointDef hip;
    hip.bodyA = hull_;
    hip.bodyB = upper;
    hip.localAnchorA = vec(0, kLegDown);
    hip.localAnchorB = vec(0, kLegH / 2);
    hip.referenceAngle = upper->GetAngle() - hull_->GetAngle();  // what pybox2d sets
    hip.enableMotor = true;
    hip.enableLimit = true;
    hip.maxMotorTorque = static_cast<float>(kMotorsTorque);
    hip.motorSpeed = static_cast<float>(i);
    hip.lowerAngle = -0.8f;
    hip.upperAngle = 1.1f;
    auto* hip_joint = static_cast<b2RevoluteJoint*>(world_->CreateJoint(&hip));

    body_def.position = vec(init_x, init_y - kLegH * 3 / 2 - kLegDown);
    part.shape = &lower_shape;
    b2Body* lower = world_->CreateBody(&body_def);
    lower->CreateFixture(&part);
    b2RevoluteJointDef knee;
    knee.bodyA = upper;
    knee.bodyB = lower;
    knee.localAnchorA = vec(0, -kLegH / 2);
    knee.localAnchorB = vec(0, kLegH / 2);
    knee.referenceAngle = lower->GetAngle() - upper->GetAngle();  // 0
    knee.enableMotor = true;
    knee.enableLimit = true;
    knee.maxMotorTorque = static_cast<float>(kMotorsTorque);
    knee.motorSpeed = 1.0f;
    knee.lowerAngle = -1.6f;
    knee.upperAngle = -0.1f;
    auto* knee_joint = static_cast<b2RevoluteJoint*>(world_->CreateJoint(&knee));

    legs_[static_cast<size_t>(2 * side)] = upper;
    legs_[static_cast<size_t>(2 * side + 1)] = lower;
    joints_[static_cast<size_t>(2 * side)] = hip_joint;
    joints_[static_cast<size_t>(2 * side + 1)] = knee_joint;
  }

  // Gymnasium's reset returns the observation of one zero-action step; its reward is discarded.
  const float zero[4] = {0, 0, 0, 0};
  step(zero);
}

StepReward Physics::step(std::span<const float> action) {
  for (size_t k = 0; k < 4; ++k) {
    const double speed = k % 2 == 0 ? kSpeedHip : kSpeedKnee;
    b2RevoluteJoint* j = joints_[k];
    wake_if_asleep(j->GetBodyA());
    wake_if_asleep(j->GetBodyB());
    j->SetMotorSpeed(static_cast<float>(speed * np_sign(action[k])));
    j->SetMaxMotorTorque(static_cast<float>(kMotorsTorque * clipped_abs(action[k])));
  }
  world_->Step(static_cast<float>(1.0 / kFps), 6 * 30, 2 * 30);

  // Lidar from the hull's position after the step.
  const b2Vec2 pos = hull_->GetPosition();
  lidar_p1_ = pos;
  for (size_t i = 0; i < kLidarRays; ++i) {
    const b2Vec2 p2 = vec(pos.x + ray_dx_[i], pos.y - ray_dy_[i]);
    lidar_->fraction = 1.0f;
    lidar_->point = p2;
    world_->RayCast(lidar_.get(), pos, p2);
    state_.lidar[i] = lidar_->fraction;
    lidar_p2_[i] = lidar_->point;
  }
  read_state();

  const double s = shaping(state_);
  double reward = has_prev_shaping_ ? s - prev_shaping_ : 0.0;
  prev_shaping_ = s;
  has_prev_shaping_ = true;
  reward = subtract_torque_cost(reward, action);
  return finish(reward, game_over_, state_.x);
}

void Physics::read_state() {
  const b2Vec2 p = hull_->GetPosition();
  const b2Vec2 v = hull_->GetLinearVelocity();
  state_.x = p.x;
  state_.y = p.y;
  state_.vx = v.x;
  state_.vy = v.y;
  state_.angle = hull_->GetAngle();
  state_.omega = hull_->GetAngularVelocity();
  for (size_t k = 0; k < 4; ++k) {
    state_.joint_angle[k] = joints_[k]->GetJointAngle();
    state_.joint_speed[k] = joints_[k]->GetJointSpeed();
  }
  state_.contact = contact_;
}

}  // namespace recur::envs::bipedal
